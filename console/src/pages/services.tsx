/**
 * Services: where each comes from, its connected instances, connection tokens (a new one shown once),
 * its upstream engine; create, edit and remove the account's own (API-made) ones.
 */
import { useState } from 'preact/hooks';
import { accountPath, call, enc, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { formatDate } from '../format.js';
import type { Service, ServiceInstance } from '../model.js';
import { Badge, Button, Card, Dialog, Empty, ErrorNote, Field, Loading, Page, SecretOnce, useAction, useLoad } from '../ui.js';

function status(s: Service): { label: string; tone: 'ok' | 'warn' | 'bad' | 'info' } {
  // A fitted service answers through its base service's instances.
  if (s.base) return s.base.fitted ? { label: 'fitted', tone: 'ok' } : { label: 'not fitted', tone: 'warn' };
  const health = s.connectedInstances?.find((i) => i.engineHealth)?.engineHealth;
  if (health) return { label: `engine ${health.status}`, tone: ENGINE_TONE[health.status] };
  if (s.upstream) return { label: 'engine', tone: 'info' };
  const n = s.instances ?? 0;
  return n > 0 ? { label: `${n} instance${n === 1 ? '' : 's'} serving`, tone: 'ok' } : { label: 'no instance', tone: 'bad' };
}

const ENGINE_TONE = { healthy: 'ok', unhealthy: 'bad', pending: 'warn', unchecked: 'info' } as const;

/** One connected instance: name, version or engine health, state and load. */
function InstanceRow(props: { instance: ServiceInstance }) {
  const i = props.instance;
  const load = i.load;
  const facts = [
    i.hostname,
    i.version !== null ? `version ${i.version}` : null,
    i.image,
    i.engineHealth
      ? `engine ${i.engineHealth.status}${i.engineHealth.consecutiveFailures ? ` (${i.engineHealth.consecutiveFailures} failed checks)` : ''}`
      : null,
    `${i.inFlight} in flight`,
    load?.queueDepth !== undefined ? `queue ${load.queueDepth}` : null,
    load?.kvCacheUsage !== undefined ? `KV cache ${Math.round(load.kvCacheUsage * 100)}%` : null,
  ].filter(Boolean);
  return (
    <li class="token-row">
      <span>
        <code>{i.name}</code> <span class="muted">{facts.join(' · ')}</span>
      </span>
      <Badge tone={i.state === 'serving' ? 'ok' : 'warn'}>{i.state}</Badge>
    </li>
  );
}

const SOURCE_LABEL = { stored: 'made here', config: 'config file', derived: 'fitted' } as const;

export function ServicesPage() {
  const app = useApp();
  const base = `${accountPath(app.account.name)}/services`;
  const services = useLoad(() => call(base).then((a) => items<Service>(a)), [base], 5000);
  const [open, setOpen] = useState<Service | 'new' | undefined>();
  const [token, setToken] = useState<{ service: string; token: string } | undefined>();
  const action = useAction();
  const mayChange = canAct(app, 'developer');
  const saved = (answer: Service) => {
    setOpen(undefined);
    if (answer.connectionToken) setToken({ service: answer.name, token: answer.connectionToken.token });
    services.reload();
  };
  const remove = (s: Service) =>
    action.run(async () => {
      if (!confirm(`Remove the service "${s.name}"? Calls to it fail at once, on every gateway.`)) return;
      await call(`${base}/${enc(String(s.id))}`, { method: 'DELETE' });
      services.reload();
    });
  const revokeToken = (s: Service, id: string) =>
    action.run(async () => {
      if (!confirm(`Revoke this connection token of "${s.name}"? Instances using it are refused from now on.`)) return;
      await call(`${base}/${enc(String(s.id))}`, { method: 'PATCH', body: { revokeConnectionTokens: [id] } });
      services.reload();
    });
  const newToken = (s: Service) =>
    action.run(async () => {
      saved(await call<Service>(`${base}/${enc(String(s.id))}`, { method: 'PATCH', body: { newConnectionToken: true } }));
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
      {token && (
        <SecretOnce title={`Connection token of “${token.service}”`} secret={token.token} onDone={() => setToken(undefined)}>
          Model service instances connect with this token (PLATFORM_SERVICE_TOKEN). It is shown only once.
        </SecretOnce>
      )}
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
            const state = status(s);
            const editable = s.source === 'stored';
            return (
              <Card key={s.id} class="service">
                <header class="service-head">
                  <h2 class="card-title">
                    {s.name} <span class="muted small">#{s.id}</span>
                  </h2>
                  <Badge tone={state.tone}>{state.label}</Badge>
                </header>
                <dl class="facts">
                  <dt>Source</dt>
                  <dd>{s.source ? SOURCE_LABEL[s.source] : '—'}</dd>
                  <dt>Access</dt>
                  <dd>{s.public ? 'public' : 'private'}</dd>
                  {s.family && (
                    <>
                      <dt>Family</dt>
                      <dd>{s.family}</dd>
                    </>
                  )}
                  {s.registryModel && (
                    <>
                      <dt>Model</dt>
                      <dd>
                        {s.registryModel.displayName} <span class="muted small">({s.registryModel.provider})</span>
                      </dd>
                    </>
                  )}
                  {s.aliases?.length ? (
                    <>
                      <dt>Aliases</dt>
                      <dd>{s.aliases.join(', ')}</dd>
                    </>
                  ) : null}
                  {s.base && (
                    <>
                      <dt>Fitted from</dt>
                      <dd>{s.base.name ?? `#${s.base.id}`}</dd>
                    </>
                  )}
                  {s.fittable && (
                    <>
                      <dt>Fitting</dt>
                      <dd>fittable</dd>
                    </>
                  )}
                  {s.upstream && (
                    <>
                      <dt>Engine</dt>
                      <dd>
                        <code>{s.upstream.baseUrl}</code>{' '}
                        <span class="muted small">
                          ({s.upstream.api ?? 'openai'} API{s.upstream.apiKeySet ? ', key set' : ''})
                        </span>
                      </dd>
                    </>
                  )}
                  {!s.base && (
                    <>
                      <dt>Instances</dt>
                      <dd>{s.instances ?? 0} serving here</dd>
                    </>
                  )}
                </dl>
                {s.connectedInstances && s.connectedInstances.length > 0 && (
                  <>
                    <h3 class="sub">Connected instances</h3>
                    <ul class="plain small" aria-label={`Instances of ${s.name}`}>
                      {s.connectedInstances.map((i) => (
                        <InstanceRow key={i.name} instance={i} />
                      ))}
                    </ul>
                  </>
                )}
                {s.connectionTokens && s.connectionTokens.length > 0 && (
                  <>
                    <h3 class="sub">Connection tokens</h3>
                    <ul class="plain small">
                      {s.connectionTokens.map((t) => (
                        <li key={t.id} class="token-row">
                          <span>
                            {t.id.startsWith('config:') ? 'in the config file' : <code>{t.prefix ? `${t.prefix}…` : t.id}</code>}{' '}
                            {t.createdAt ? `· ${formatDate(t.createdAt)}` : ''}
                          </span>
                          {mayChange && editable && (
                            <button
                              type="button"
                              class="linklike"
                              onClick={() => void revokeToken(s, t.id)}
                              aria-label={`Revoke token ${t.prefix ?? t.id} of ${s.name}`}
                            >
                              Revoke
                            </button>
                          )}
                        </li>
                      ))}
                    </ul>
                  </>
                )}
                {mayChange && editable && (
                  <div class="form-actions">
                    <Button onClick={() => setOpen(s)} aria-label={`Edit ${s.name}`}>
                      Edit
                    </Button>
                    <Button onClick={() => void newToken(s)} aria-label={`New token for ${s.name}`}>
                      New token
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
              saved(
                open === 'new'
                  ? await call<Service>(base, { body })
                  : await call<Service>(`${base}/${enc(String(open.id))}`, { method: 'PATCH', body }),
              );
            }}
          />
        )}
      </Dialog>
    </Page>
  );
}

/** Fields the form edits; the rest of a service's settings go in the JSON box; the answer's own fields are left out. */
const FORM_FIELDS = new Set(['name', 'public', 'upstream', 'aliases', 'family']);
const ANSWER_FIELDS = new Set([
  'id',
  'account',
  'source',
  'connectionTokens',
  'connectionToken',
  'registryModel',
  'instances',
  'connectedInstances',
  'base',
  'createdAt',
  'updatedAt',
]);

function ServiceForm(props: { initial?: Service; onSave: (body: Record<string, unknown>) => Promise<void> }) {
  const s = props.initial;
  const [name, setName] = useState(s?.name ?? '');
  const [isPublic, setPublic] = useState(s?.public ?? false);
  const [family, setFamily] = useState(s?.family ?? 'openai');
  const [aliases, setAliases] = useState((s?.aliases ?? []).join(', '));
  const [useUpstream, setUseUpstream] = useState(s ? Boolean(s.upstream) : false);
  const [api, setApi] = useState(s?.upstream?.api ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(s?.upstream?.baseUrl ?? '');
  const [engineKey, setEngineKey] = useState('');
  const [engineModel, setEngineModel] = useState(s?.upstream?.defaultModel ?? '');
  const [models, setModels] = useState(
    Object.entries(s?.upstream?.models ?? {})
      .map(([ours, theirs]) => (ours === theirs ? ours : `${ours}=${theirs}`))
      .join(', '),
  );
  const rest = Object.fromEntries(Object.entries(s ?? {}).filter(([k]) => !FORM_FIELDS.has(k) && !ANSWER_FIELDS.has(k)));
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
      if (useUpstream) {
        // The block is replaced whole; the engine key stays when none is typed and the origin is the same.
        const before: Record<string, unknown> = { ...(s?.upstream ?? {}) };
        delete before.apiKeySet;
        delete before.models;
        delete before.defaultModel;
        body.upstream = {
          ...before,
          api,
          baseUrl: baseUrl.trim(),
          ...(engineModel.trim() ? { defaultModel: engineModel.trim() } : {}),
          ...(Object.keys(modelMap).length ? { models: modelMap } : {}),
          ...(engineKey ? { apiKey: engineKey } : {}),
        };
      } else if (s?.upstream) body.upstream = null;
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
              <Field label="Base URL" hint="Credentials in a URL are shown masked: type them again when you change it">
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
            <div class="row">
              <Field label="Engine model" hint="The model the engine runs when a call names none">
                {(id) => <input id={id} value={engineModel} onInput={(e) => setEngineModel(e.currentTarget.value)} />}
              </Field>
              <Field label="Models" hint="Comma-separated; ours=engine's to rename">
                {(id) => <input id={id} value={models} onInput={(e) => setModels(e.currentTarget.value)} />}
              </Field>
              <Field
                label="Engine API key"
                hint={s?.upstream?.apiKeySet ? 'Set: leave empty to keep it' : 'Kept by the gateway, never shown again'}
              >
                {(id) => (
                  <input
                    id={id}
                    type="password"
                    autocomplete="off"
                    value={engineKey}
                    onInput={(e) => setEngineKey(e.currentTarget.value)}
                  />
                )}
              </Field>
            </div>
          </>
        )}
      </fieldset>
      <Field label="Other settings (JSON)" hint="fallbacks, prices, timeoutSec, configs … as in the config file's services[]">
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
