/** API tokens: create (permissions, services, expiry, budget, rate), the secret shown once, edit, rotate, revoke. */
import { useState } from 'preact/hooks';
import { accountPath, call, enc, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { BudgetsEditor, describeBudget } from '../budgets.js';
import { type Column, DataTable } from '../data-table.js';
import { formatDate, toDate } from '../format.js';
import { PERMISSIONS, type ApiKey, type Budget, type Permission, type Service } from '../model.js';
import { Badge, Button, Card, Dialog, ErrorNote, Field, Page, SecretOnce, useAction, useLoad } from '../ui.js';

function keyState(key: ApiKey): { label: string; tone: 'ok' | 'warn' | 'bad' } {
  if (key.revokedAt) return { label: 'revoked', tone: 'bad' };
  const expires = toDate(key.expiresAt);
  if (expires && expires.getTime() < Date.now()) return { label: 'expired', tone: 'bad' };
  if ((toDate(key.previousKeyValidUntil)?.getTime() ?? 0) > Date.now())
    return { label: 'old secret valid until ' + formatDate(key.previousKeyValidUntil), tone: 'warn' };
  return { label: 'active', tone: 'ok' };
}

const KEY_COLUMNS: Column<ApiKey>[] = [
  {
    header: 'Name',
    cell: (key) => (
      <>
        <strong>{key.name}</strong>
        {key.source === 'config' && <Badge>config</Badge>}
      </>
    ),
  },
  {
    header: 'Key',
    cell: (key) => <code>{key.prefix ? `${key.prefix}…` : key.source === 'config' ? 'in the config file' : '—'}</code>,
  },
  { header: 'Permissions', cell: (key) => key.permissions.map((p) => PERMISSIONS.find((x) => x.id === p)?.label ?? p).join(', ') },
  {
    header: 'Limits',
    class: 'small',
    cell: (key) => (
      <>
        {key.requestsPerSecond ? <div>{key.requestsPerSecond} req/s</div> : null}
        {(key.budgets ?? []).map((b, i) => (
          <div key={i}>{describeBudget(b)}</div>
        ))}
        {key.services?.length ? <div>{key.services.length} service(s)</div> : null}
        {!key.requestsPerSecond && !key.budgets?.length && !key.services?.length && '—'}
      </>
    ),
  },
  { header: 'Expires', cell: (key) => (key.expiresAt ? formatDate(key.expiresAt) : 'never') },
  {
    header: 'Status',
    cell: (key) => {
      const state = keyState(key);
      return <Badge tone={state.tone}>{state.label}</Badge>;
    },
  },
];

export function KeysPage() {
  const app = useApp();
  const base = `${accountPath(app.account.name)}/api-keys`;
  const keys = useLoad(() => call(base).then((a) => items<ApiKey>(a)), [base]);
  const services = useLoad(() => call(`${accountPath(app.account.name)}/services`).then((a) => items<Service>(a)), [app.account.name]);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKey | undefined>();
  const [rotating, setRotating] = useState<ApiKey | undefined>();
  const [secret, setSecret] = useState<{ name: string; key: string } | undefined>();
  const action = useAction();
  const mayChange = canAct(app, 'developer');

  const revoke = (key: ApiKey) =>
    action.run(async () => {
      if (!confirm(`Revoke "${key.name}"? Applications using it stop working within seconds.`)) return;
      await call(`${base}/${enc(key.id)}`, { method: 'DELETE' });
      keys.reload();
    });

  const columns: Column<ApiKey>[] = [
    ...KEY_COLUMNS,
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (key) =>
        mayChange &&
        key.source !== 'config' &&
        !key.revokedAt && (
          <>
            <Button onClick={() => setEditing(key)} aria-label={`Edit ${key.name}`}>
              Edit
            </Button>
            <Button onClick={() => setRotating(key)} aria-label={`Rotate ${key.name}`}>
              Rotate
            </Button>
            <Button variant="danger" onClick={() => void revoke(key)} aria-label={`Revoke ${key.name}`}>
              Revoke
            </Button>
          </>
        ),
    },
  ];

  return (
    <Page
      title="API tokens"
      description="One key per application. A key's secret is shown once, when it is created or rotated; the gateway keeps only its hash."
      actions={
        mayChange && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create a key
          </Button>
        )
      }
    >
      {secret && (
        <SecretOnce title={`Key “${secret.name}” created`} secret={secret.key} onDone={() => setSecret(undefined)}>
          Copy the secret now: it is shown only once and cannot be recovered. Store it where your application reads its configuration.
        </SecretOnce>
      )}
      <ErrorNote error={action.error ?? keys.error} />
      <Card>
        <DataTable
          caption={`API keys of ${app.account.name}`}
          columns={columns}
          rows={keys.data}
          rowKey={(key) => key.id}
          loading={keys.loading}
          empty="No keys yet. Create one for each application that calls models."
        />
      </Card>
      <Dialog title="Create an API key" open={creating} onClose={() => setCreating(false)}>
        <KeyForm
          services={services.data ?? []}
          onSave={async (body) => {
            const created = await call<ApiKey>(base, { body });
            setCreating(false);
            if (created.key) setSecret({ name: created.name, key: created.key });
            keys.reload();
          }}
        />
      </Dialog>
      <Dialog title={`Edit ${editing?.name ?? ''}`} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <KeyForm
            initial={editing}
            services={services.data ?? []}
            onSave={async (body) => {
              await call(`${base}/${enc(editing.id)}`, { method: 'PATCH', body });
              setEditing(undefined);
              keys.reload();
            }}
          />
        )}
      </Dialog>
      <Dialog title={`Rotate ${rotating?.name ?? ''}`} open={Boolean(rotating)} onClose={() => setRotating(undefined)}>
        {rotating && (
          <RotateForm
            onRotate={async (graceSeconds) => {
              const rotated = await call<ApiKey>(`${base}/${enc(rotating.id)}/rotate`, { body: { gracePeriodSeconds: graceSeconds } });
              setRotating(undefined);
              if (rotated.key) setSecret({ name: rotating.name, key: rotated.key });
              keys.reload();
            }}
          />
        )}
      </Dialog>
    </Page>
  );
}

interface KeyBody {
  name: string;
  permissions: Permission[];
  services?: number[] | null;
  expiresAt?: string | null;
  requestsPerSecond?: number | null;
  budgets: Budget[];
}

function KeyForm(props: { initial?: ApiKey; services: Service[]; onSave: (body: KeyBody) => Promise<void> }) {
  const initial = props.initial;
  const [name, setName] = useState(initial?.name ?? '');
  const [permissions, setPermissions] = useState<Permission[]>(initial?.permissions ?? ['MODEL_REQUESTS', 'READ_DATA']);
  const [limitServices, setLimitServices] = useState(Boolean(initial?.services?.length));
  const [services, setServices] = useState<number[]>((initial?.services ?? []).map(Number));
  const [expiresAt, setExpiresAt] = useState(initial?.expiresAt ? (toDate(initial.expiresAt)?.toISOString().slice(0, 10) ?? '') : '');
  const [rate, setRate] = useState(initial?.requestsPerSecond ? String(initial.requestsPerSecond) : '');
  const [budgets, setBudgets] = useState<Budget[]>(initial?.budgets ?? []);
  const action = useAction();
  const toggle = <T,>(list: T[], item: T) => (list.includes(item) ? list.filter((x) => x !== item) : [...list, item]);
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() =>
      props.onSave({
        name: name.trim(),
        permissions,
        services: limitServices ? services : initial ? null : undefined,
        expiresAt: expiresAt ? new Date(`${expiresAt}T23:59:59Z`).toISOString() : initial ? null : undefined,
        requestsPerSecond: rate ? Number(rate) : initial ? null : undefined,
        budgets,
      }),
    );
  };
  return (
    <form class="form" onSubmit={submit}>
      <Field label="Name" hint="The application that uses it, e.g. support-bot">
        {(id) => <input id={id} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <fieldset class="fieldset">
        <legend>Permissions</legend>
        {PERMISSIONS.map((p) => (
          <label class="check" key={p.id}>
            <input type="checkbox" checked={permissions.includes(p.id)} onChange={() => setPermissions(toggle(permissions, p.id))} />
            <span>
              {p.label} <span class="hint">{p.hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <fieldset class="fieldset">
        <legend>Services</legend>
        <label class="check">
          <input type="checkbox" checked={limitServices} onChange={() => setLimitServices(!limitServices)} />
          <span>Only the services chosen below (otherwise every service the account may call)</span>
        </label>
        {limitServices && (
          <div class="checks">
            {props.services.map((s) => (
              <label class="check" key={s.id}>
                <input type="checkbox" checked={services.includes(s.id)} onChange={() => setServices(toggle(services, s.id))} />
                <span>{s.name}</span>
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <div class="row">
        <Field label="Expires on (UTC)" hint="Empty: never">
          {(id) => <input id={id} type="date" value={expiresAt} onInput={(e) => setExpiresAt(e.currentTarget.value)} />}
        </Field>
        <Field label="Requests per second" hint="Empty: the account's limit">
          {(id) => <input id={id} type="number" min="1" step="1" value={rate} onInput={(e) => setRate(e.currentTarget.value)} />}
        </Field>
      </div>
      <BudgetsEditor value={budgets} onChange={setBudgets} idPrefix="key-budget" />
      <ErrorNote error={action.error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={action.busy} disabled={!permissions.length}>
          {initial ? 'Save' : 'Create key'}
        </Button>
      </div>
    </form>
  );
}

function RotateForm(props: { onRotate: (graceSeconds: number) => Promise<void> }) {
  const [grace, setGrace] = useState('3600');
  const action = useAction();
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(() => props.onRotate(Number(grace)));
      }}
    >
      <p>
        A new secret replaces this one. The old secret keeps working for the grace period, so applications can move over without downtime.
      </p>
      <Field label="Grace period">
        {(id) => (
          <select id={id} value={grace} onChange={(e) => setGrace(e.currentTarget.value)}>
            <option value="0">none: the old secret stops now</option>
            <option value="300">5 minutes</option>
            <option value="3600">1 hour</option>
            <option value="86400">1 day</option>
            <option value="604800">7 days</option>
          </select>
        )}
      </Field>
      <ErrorNote error={action.error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={action.busy}>
          Rotate
        </Button>
      </div>
    </form>
  );
}
