/** Operators: every account, create one, block or unblock it, set its rates and budgets. */
import { useState } from 'preact/hooks';
import { call, CORE, enc, items } from '../api.js';
import { useApp } from '../app-state.js';
import { BudgetsEditor, describeBudget } from '../budgets.js';
import { type Column, DataTable } from '../data-table.js';
import type { Account, Budget } from '../model.js';
import { Badge, Button, Card, Dialog, ErrorNote, Field, Page, useAction, useLoad } from '../ui.js';

const MiB = 1024 * 1024;

const ACCOUNT_COLUMNS: Column<Account>[] = [
  { header: 'ID', cell: (a) => a.id },
  {
    header: 'Name',
    cell: (a) => (
      <>
        <strong>{a.displayName || a.name}</strong> {a.displayName && a.displayName !== a.name && <span class="muted small">{a.name}</span>}{' '}
        {a.source === 'config' && <Badge>config</Badge>}
      </>
    ),
  },
  { header: 'Rate', cell: (a) => (a.requestsPerSecond ? `${a.requestsPerSecond} req/s` : '—') },
  { header: 'Input rate', cell: (a) => (a.inputBytesPerSecond ? `${+(a.inputBytesPerSecond / MiB).toFixed(2)} MiB/s` : 'default') },
  {
    header: 'Budgets',
    class: 'small',
    cell: (a) => (a.budgets?.length ? a.budgets.map((b, i) => <div key={i}>{describeBudget(b)}</div>) : '—'),
  },
  { header: 'Status', cell: (a) => (a.blocked ? <Badge tone="bad">blocked</Badge> : <Badge tone="ok">active</Badge>) },
];

export function AccountsPage() {
  const app = useApp();
  const accounts = useLoad(() => call(`${CORE}/accounts`).then((a) => items<Account>(a)), []);
  const action = useAction();
  const [editing, setEditing] = useState<Account | undefined>();
  const [name, setName] = useState('');
  const setBlocked = (a: Account, blocked: boolean) =>
    action.run(async () => {
      if (blocked && !confirm(`Block ${a.name}? Every model call of the account answers 402 ACCOUNT_BLOCKED until it is unblocked.`))
        return;
      await call(`${CORE}/accounts/${enc(a.name)}`, { method: 'PATCH', body: { blocked } });
      accounts.reload();
      await app.refreshMe();
    });
  const columns: Column<Account>[] = [
    ...ACCOUNT_COLUMNS,
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (a) => (
        <>
          {a.source !== 'config' && (
            <Button onClick={() => setEditing(a)} aria-label={`Edit ${a.name}`}>
              Edit
            </Button>
          )}
          {a.source === 'config' ? (
            <span class="muted small">set in the config file</span>
          ) : a.blocked ? (
            <Button onClick={() => void setBlocked(a, false)} aria-label={`Unblock ${a.name}`}>
              Unblock
            </Button>
          ) : (
            <Button variant="danger" onClick={() => void setBlocked(a, true)} aria-label={`Block ${a.name}`}>
              Block
            </Button>
          )}
        </>
      ),
    },
  ];
  return (
    <Page title="Accounts" description="Every account of the gateway (operators only).">
      <ErrorNote error={action.error ?? accounts.error} />
      <Card>
        <DataTable
          caption="Accounts"
          columns={columns}
          rows={accounts.data}
          rowKey={(a) => a.id}
          loading={accounts.loading}
          empty="No accounts."
        />
      </Card>
      <Card title="Create an account">
        <form
          class="form"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await call(`${CORE}/accounts`, { body: { name: name.trim() } });
              setName('');
              accounts.reload();
              // The account switcher offers it at once.
              await app.refreshMe();
            });
          }}
        >
          <Field label="Name" hint="Letters, digits, dots, dashes">
            {(id) => <input id={id} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <Button type="submit" variant="primary" busy={action.busy}>
            Create account
          </Button>
        </form>
      </Card>
      <Dialog title={`Edit ${editing?.name ?? ''}`} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <AccountForm
            account={editing}
            onSave={async (body) => {
              await call(`${CORE}/accounts/${enc(editing.name)}`, { method: 'PATCH', body });
              setEditing(undefined);
              accounts.reload();
            }}
          />
        )}
      </Dialog>
    </Page>
  );
}

function AccountForm(props: { account: Account; onSave: (body: Record<string, unknown>) => Promise<void> }) {
  const [displayName, setDisplayName] = useState(props.account.displayName ?? '');
  const [rate, setRate] = useState(String(props.account.requestsPerSecond ?? ''));
  const ownInput = props.account.inputBytesPerSecond;
  const [inputRate, setInputRate] = useState(ownInput ? String(ownInput / MiB) : '');
  const [budgets, setBudgets] = useState<Budget[]>(props.account.budgets ?? []);
  const action = useAction();
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        // The input rate goes only when changed: it is the operator's, and empty means the gateway's default.
        const input = inputRate ? Math.round(Number(inputRate) * MiB) : null;
        void action.run(() =>
          props.onSave({
            displayName,
            budgets,
            ...(rate ? { requestsPerSecond: Number(rate) } : {}),
            ...(input !== (ownInput ?? null) ? { inputBytesPerSecond: input } : {}),
          }),
        );
      }}
    >
      <Field label="Display name">
        {(id) => <input id={id} value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />}
      </Field>
      <Field label="Requests per second">
        {(id) => <input id={id} type="number" min="1" value={rate} onInput={(e) => setRate(e.currentTarget.value)} />}
      </Field>
      <Field label="Input MiB per second" hint="Bytes of its request bodies read per second; empty: the gateway's default.">
        {(id) => (
          <input id={id} type="number" min="0.0625" step="any" value={inputRate} onInput={(e) => setInputRate(e.currentTarget.value)} />
        )}
      </Field>
      <BudgetsEditor value={budgets} onChange={setBudgets} idPrefix="account-budget" />
      <ErrorNote error={action.error} />
      <Button type="submit" variant="primary" busy={action.busy}>
        Save
      </Button>
    </form>
  );
}
