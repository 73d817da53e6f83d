/** Services: status, connected instances (load, version), connection tokens, upstream engines and their health; create and edit. */
import { useState } from 'preact/hooks';
import { accountPath, call, enc, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { formatDate } from '../format.js';
import type { Service } from '../model.js';
import { Badge, Button, Card, Dialog, Empty, ErrorNote, Field, Loading, Page, useAction, useLoad } from '../ui.js';

function statusTone(status: string | undefined): 'ok' | 'warn' | 'bad' | 'neutral' {
  if (!status) return 'neutral';
  if (/^(ok|up|serving|ready|healthy|online)$/i.test(status)) return 'ok';
  if (/^(degraded|connecting|draining|starting)$/i.test(status)) return 'warn';
  return 'bad';
}

function loadText(load: NonNullable<Service['instances']>[number]['load']): string {
  if (load === undefined) return '—';
  if (typeof load === 'number') return String(load);
  return `${load.active ?? 0}${load.capacity ? ` / ${load.capacity}` : ''}`;
}

function serviceStatus(s: Service): string {
  if (s.status) return s.status;
  if (s.upstream) return 'upstream';
  return s.instances?.length ? 'serving' : 'no instances';
}

export function ServicesPage() {
  const app = useApp();
  const base = `${accountPath(app.account.name)}/services`;
  const services = useLoad(() => call(base).then((a) => items<Service>(a)), [base], 5000);
  const [open, setOpen] = useState<Service | 'new' | undefined>();
  const action = useAction();
  const mayChange = canAct(app, 'developer');
  const remove = (s: Service) =>
    action.run(async () => {
      if (!confirm(`Remove the service "${s.name}"? Calls to it fail at once.`)) return;
      await call(`${base}/${enc(s.name)}`, { method: 'DELETE' });
      services.reload();
    });
  return (
    <Page
      title="Services"
      description="The models this account serves: connected instances, upstream engines, and who may call them. Changes reach every gateway within seconds."
      actions={
        mayChange && (
          <Button variant="primary" onClick={() => setOpen('new')}>
            Create a service
          </Button>
        )
      }
    >
      <ErrorNote error={action.error ?? services.error} />
      {services.loading && !services.data ? (
        <Loading />
      ) : !services.data?.length ? (
        <Card>
          <Empty>No services yet.</Empty>
        </Card>
      ) : (
        <div class="grid">
          {services.data.map((s) => {
            const status = serviceStatus(s);
            const readOnly = s.source !== undefined && s.source !== 'stored';
            const engines =
              s.engines ??
              (s.upstream?.baseUrl
                ? [
                    {
                      baseUrl: s.upstream.baseUrl,
                      status: typeof s.upstream.health === 'string' ? s.upstream.health : s.upstream.health?.status,
                    },
                  ]
                : []);
            return (
              <Card key={s.id} class="service">
                <header class="service-head">
                  <h2 class="card-title">
                    {s.name} <span class="muted small">#{s.id}</span>
                  </h2>
                  <Badge tone={statusTone(status)}>{status}</Badge>
                </header>
                <dl class="facts">
                  <dt>Access</dt>
                  <dd>{s.public ? 'public' : 'private'}</dd>
                  {s.family && (
                    <>
                      <dt>Family</dt>
                      <dd>{s.family}</dd>
                    </>
                  )}
                  {s.defaultModel && (
                    <>
                      <dt>Default model</dt>
                      <dd>{s.defaultModel}</dd>
                    </>
                  )}
                  {s.aliases?.length ? (
                    <>
                      <dt>Aliases</dt>
                      <dd>{s.aliases.join(', ')}</dd>
                    </>
                  ) : null}
                  {s.fittable && (
                    <>
                      <dt>Fitting</dt>
                      <dd>fittable</dd>
                    </>
                  )}
                  <dt>Source</dt>
                  <dd>{s.source ?? 'stored'}</dd>
                </dl>
                {s.instances && (
                  <>
                    <h3 class="sub">Instances ({s.instances.length})</h3>
                    {s.instances.length ? (
                      <table class="table compact">
                        <thead>
                          <tr>
                            <th scope="col">Instance</th>
                            <th scope="col">Version</th>
                            <th scope="col">Load</th>
                            <th scope="col">State</th>
                          </tr>
                        </thead>
                        <tbody>
                          {s.instances.map((i, n) => (
                            <tr key={i.id ?? n}>
                              <td>
                                <code>{i.id ?? n + 1}</code>
                              </td>
                              <td>{i.version ?? '—'}</td>
                              <td>{loadText(i.load)}</td>
                              <td>{i.state ?? '—'}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    ) : (
                      <p class="hint">No instance connected.</p>
                    )}
                  </>
                )}
                {engines.length > 0 && (
                  <>
                    <h3 class="sub">Upstream engines</h3>
                    <ul class="plain">
                      {engines.map((e, n) => (
                        <li key={n}>
                          <code>{e.baseUrl ?? e.url}</code>{' '}
                          <Badge tone={statusTone(e.status ?? (e.healthy === undefined ? undefined : e.healthy ? 'up' : 'down'))}>
                            {e.status ?? (e.healthy === undefined ? 'unknown' : e.healthy ? 'up' : 'down')}
                          </Badge>
                        </li>
                      ))}
                    </ul>
                  </>
                )}
                {s.connectionTokens && (
                  <>
                    <h3 class="sub">Connection tokens</h3>
                    <ul class="plain small">
                      {s.connectionTokens.length ? (
                        s.connectionTokens.map((t, n) => (
                          <li key={n}>
                            {t.name ?? t.prefix ?? `token ${n + 1}`} {t.createdAt ? `· ${formatDate(t.createdAt)}` : ''}
                          </li>
                        ))
                      ) : (
                        <li>none</li>
                      )}
                    </ul>
                  </>
                )}
                {mayChange && !readOnly && (
                  <div class="form-actions">
                    <Button onClick={() => setOpen(s)} aria-label={`Edit ${s.name}`}>
                      Edit
                    </Button>
                    <Button variant="danger" onClick={() => void remove(s)} aria-label={`Remove ${s.name}`}>
                      Remove
                    </Button>
                  </div>
                )}
              </Card>
            );
          })}
        </div>
      )}
      <Dialog
        title={open === 'new' ? 'Create a service' : `Edit ${open?.name ?? ''}`}
        open={Boolean(open)}
        onClose={() => setOpen(undefined)}
      >
        {open && (
          <ServiceForm
            initial={open === 'new' ? undefined : open}
            onSave={async (body) => {
              if (open === 'new') await call(base, { body });
              else await call(`${base}/${enc(open.name)}`, { method: 'PATCH', body });
              setOpen(undefined);
              services.reload();
            }}
          />
        )}
      </Dialog>
    </Page>
  );
}

/** Fields the form edits; the rest of a service's settings in the JSON box. */
const FORM_FIELDS = new Set(['name', 'public', 'upstream', 'aliases', 'defaultModel', 'family']);
const READ_ONLY_FIELDS = new Set([
  'id',
  'accountId',
  'account',
  'accountName',
  'source',
  'status',
  'instances',
  'engines',
  'connectionTokens',
  'seq',
  'createdAt',
  'updatedAt',
]);

function ServiceForm(props: { initial?: Service; onSave: (body: Record<string, unknown>) => Promise<void> }) {
  const s = props.initial;
  const [name, setName] = useState(s?.name ?? '');
  const [isPublic, setPublic] = useState(s?.public ?? false);
  const [family, setFamily] = useState(s?.family ?? 'openai');
  const [aliases, setAliases] = useState((s?.aliases ?? []).join(', '));
  const [useUpstream, setUseUpstream] = useState(s ? Boolean(s.upstream) : true);
  const [api, setApi] = useState(s?.upstream?.api ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(s?.upstream?.baseUrl ?? '');
  const [models, setModels] = useState(
    Object.entries(s?.upstream?.models ?? {})
      .map(([ours, theirs]) => (ours === theirs ? ours : `${ours}=${theirs}`))
      .join(', '),
  );
  const rest = Object.fromEntries(Object.entries(s ?? {}).filter(([k]) => !FORM_FIELDS.has(k) && !READ_ONLY_FIELDS.has(k)));
  const [extra, setExtra] = useState(Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '{}');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      let more: Record<string, unknown>;
      try {
        more = JSON.parse(extra || '{}') as Record<string, unknown>;
      } catch {
        throw new Error('Other settings: not valid JSON');
      }
      const modelMap = Object.fromEntries(
        models
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean)
          .map((m) => {
            const [ours, theirs] = m.split('=');
            return [ours!.trim(), (theirs ?? ours!).trim()];
          }),
      );
      const body: Record<string, unknown> = {
        ...more,
        name: name.trim(),
        public: isPublic,
        family,
        aliases: aliases
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean),
      };
      if (useUpstream) body.upstream = { ...(s?.upstream ?? {}), api, baseUrl: baseUrl.trim(), models: modelMap };
      else if (s?.upstream) body.upstream = null;
      await props.onSave(body);
    });
  };
  return (
    <form class="form" onSubmit={submit}>
      <Field label="Name">
        {(id) => (
          <input id={id} required pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        )}
      </Field>
      <div class="row">
        <Field label="Family">
          {(id) => (
            <select id={id} value={family} onChange={(e) => setFamily(e.currentTarget.value)}>
              <option value="openai">openai (chat)</option>
              <option value="anthropic">anthropic</option>
              <option value="other">other</option>
            </select>
          )}
        </Field>
        <Field label="Aliases" hint="Comma-separated model names for the chat adapters">
          {(id) => <input id={id} value={aliases} onInput={(e) => setAliases(e.currentTarget.value)} />}
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={isPublic} onChange={() => setPublic(!isPublic)} />
        <span>Public: other accounts may call it</span>
      </label>
      <fieldset class="fieldset">
        <legend>Upstream engine</legend>
        <label class="check">
          <input type="checkbox" checked={useUpstream} onChange={() => setUseUpstream(!useUpstream)} />
          <span>Served by an HTTP engine (vLLM, Ollama, OpenAI, Anthropic…) instead of connected instances</span>
        </label>
        {useUpstream && (
          <>
            <div class="row">
              <Field label="API">
                {(id) => (
                  <select id={id} value={api} onChange={(e) => setApi(e.currentTarget.value)}>
                    <option value="openai">OpenAI-compatible</option>
                    <option value="anthropic">Anthropic</option>
                  </select>
                )}
              </Field>
              <Field label="Base URL">
                {(id) => (
                  <input
                    id={id}
                    type="url"
                    required
                    placeholder="http://127.0.0.1:11434/v1"
                    value={baseUrl}
                    onInput={(e) => setBaseUrl(e.currentTarget.value)}
                  />
                )}
              </Field>
            </div>
            <Field label="Models" hint="Comma-separated; ours=engine's to rename">
              {(id) => <input id={id} value={models} onInput={(e) => setModels(e.currentTarget.value)} />}
            </Field>
          </>
        )}
      </fieldset>
      <Field label="Other settings (JSON)" hint="connectionTokens, fallbacks, prices, timeoutSec … as in the API">
        {(id) => <textarea id={id} rows={5} class="mono" value={extra} onInput={(e) => setExtra(e.currentTarget.value)} />}
      </Field>
      <ErrorNote error={action.error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={action.busy}>
          {s ? 'Save' : 'Create service'}
        </Button>
      </div>
    </form>
  );
}
