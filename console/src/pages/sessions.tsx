/** The signed-in user's sessions: where they are signed in, and ending any of them. */
import { call, CORE, enc, items } from '../api.js';
import { useApp } from '../app-state.js';
import { type Column, DataTable } from '../data-table.js';
import { formatDate } from '../format.js';
import type { Session } from '../model.js';
import { Badge, Button, Card, ErrorNote, Page, useAction, useLoad } from '../ui.js';

export function SessionsPage() {
  const app = useApp();
  const sessions = useLoad(() => call(`${CORE}/auth/sessions`).then((a) => items<Session>(a)), []);
  const action = useAction();
  const end = (s: Session) =>
    action.run(async () => {
      await call(`${CORE}/auth/sessions/${enc(s.id)}`, { method: 'DELETE' });
      // Ending this very session signs out: `auth/me` no longer knows it.
      if (s.current) await app.refreshMe();
      else sessions.reload();
    });
  const columns: Column<Session>[] = [
    {
      header: 'Browser',
      class: 'small',
      cell: (s) => (
        <>
          {s.userAgent ?? 'unknown'} {s.current && <Badge tone="info">this one</Badge>}
        </>
      ),
    },
    { header: 'Signed in', cell: (s) => formatDate(s.createdAt) },
    { header: 'Last seen', cell: (s) => formatDate(s.lastSeenAt) },
    { header: 'Expires', cell: (s) => formatDate(s.expiresAt) },
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (s) => (
        <Button
          variant="danger"
          onClick={() => void end(s)}
          aria-label={s.current ? 'End this session' : `End the session of ${formatDate(s.createdAt)}`}
        >
          End
        </Button>
      ),
    },
  ];
  return (
    <Page title="Sessions" description={`Where ${app.me.user.email} is signed in. Sessions end by themselves when they expire.`}>
      <ErrorNote error={action.error ?? sessions.error} />
      <Card>
        <DataTable
          caption={`Sessions of ${app.me.user.email}`}
          columns={columns}
          rows={sessions.data}
          rowKey={(s) => s.id}
          loading={sessions.loading}
          empty="No sessions."
        />
      </Card>
    </Page>
  );
}
