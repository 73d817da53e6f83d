/** The signed-in user's sessions: where they are signed in, and ending any of them. */
import { call, CORE, enc, items } from '../api.js';
import { useApp } from '../app-state.js';
import { formatDate } from '../format.js';
import type { Session } from '../model.js';
import { Badge, Button, Card, Empty, ErrorNote, Loading, Page, useAction, useLoad } from '../ui.js';

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
  return (
    <Page title="Sessions" description={`Where ${app.me.user.email} is signed in. Sessions end by themselves when they expire.`}>
      <ErrorNote error={action.error ?? sessions.error} />
      <Card>
        {sessions.loading && !sessions.data ? (
          <Loading />
        ) : !sessions.data?.length ? (
          <Empty>No sessions.</Empty>
        ) : (
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.map((s) => (
                <tr key={s.id}>
                  <td class="small">
                    {s.userAgent ?? 'unknown'} {s.current && <Badge tone="info">this one</Badge>}
                  </td>
                  <td>{formatDate(s.createdAt)}</td>
                  <td>{formatDate(s.lastSeenAt)}</td>
                  <td>{formatDate(s.expiresAt)}</td>
                  <td class="actions">
                    <Button
                      variant="danger"
                      onClick={() => void end(s)}
                      aria-label={s.current ? 'End this session' : `End the session of ${formatDate(s.createdAt)}`}
                    >
                      End
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </Page>
  );
}
