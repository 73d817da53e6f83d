/** Members of the account and their roles (owners add, change and remove them). */
import { useState } from 'preact/hooks';
import { accountPath, call, enc, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { type Column, DataTable } from '../data-table.js';
import type { Member, Role } from '../model.js';
import { Button, Card, ErrorNote, Field, Page, useAction, useLoad } from '../ui.js';

const ROLES: { id: Role; hint: string }[] = [
  { id: 'owner', hint: 'everything in the account, members included' },
  { id: 'developer', hint: 'keys, services, tasks, usage' },
  { id: 'viewer', hint: 'read only' },
];

export function MembersPage() {
  const app = useApp();
  const base = `${accountPath(app.account.name)}/members`;
  const members = useLoad(() => call(base).then((a) => items<Member>(a)), [base]);
  const owner = canAct(app, 'owner');
  const action = useAction();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const change = (m: Member, next: Role) =>
    action.run(async () => {
      await call(`${base}/${enc(m.userId)}`, { method: 'PATCH', body: { role: next } });
      members.reload();
    });
  const remove = (m: Member) =>
    action.run(async () => {
      if (!confirm(`Remove ${m.email} from ${app.account.name}?`)) return;
      await call(`${base}/${enc(m.userId)}`, { method: 'DELETE' });
      members.reload();
    });
  const columns: Column<Member>[] = [
    { header: 'Email', cell: (m) => m.email },
    {
      header: 'Role',
      cell: (m) =>
        owner ? (
          <select value={m.role} aria-label={`Role of ${m.email}`} onChange={(e) => void change(m, e.currentTarget.value as Role)}>
            {ROLES.map((r) => (
              <option key={r.id}>{r.id}</option>
            ))}
          </select>
        ) : (
          m.role
        ),
    },
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (m) =>
        owner &&
        m.userId !== app.me.user.id && (
          <Button variant="danger" onClick={() => void remove(m)} aria-label={`Remove ${m.email}`}>
            Remove
          </Button>
        ),
    },
  ];
  return (
    <Page title="Members" description={`People who may use ${app.account.displayName || app.account.name}, and what each may do.`}>
      <ErrorNote error={action.error ?? members.error} />
      <Card>
        <DataTable
          caption={`Members of ${app.account.name}`}
          columns={columns}
          rows={members.data}
          rowKey={(m) => m.userId}
          loading={members.loading}
          empty="No members."
        />
      </Card>
      {owner && (
        <Card title="Add a member">
          <form
            class="form"
            onSubmit={(e) => {
              e.preventDefault();
              void action.run(async () => {
                await call(base, { body: password ? { email: email.trim(), role, password } : { email: email.trim(), role } });
                setEmail('');
                setPassword('');
                members.reload();
              });
            }}
          >
            <div class="row">
              <Field label="Email">
                {(id) => <input id={id} type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
              </Field>
              <Field label="Role">
                {(id) => (
                  <select id={id} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                    {ROLES.map((r) => (
                      <option key={r.id} value={r.id}>
                        {r.id}: {r.hint}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label="Initial password" hint="For a new user; an existing user keeps theirs">
                {(id) => (
                  <input
                    id={id}
                    type="password"
                    autocomplete="new-password"
                    minLength={12}
                    value={password}
                    onInput={(e) => setPassword(e.currentTarget.value)}
                  />
                )}
              </Field>
            </div>
            <Button type="submit" variant="primary" busy={action.busy}>
              Add member
            </Button>
          </form>
        </Card>
      )}
    </Page>
  );
}
