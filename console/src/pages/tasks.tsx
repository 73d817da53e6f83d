/**
 * Async tasks: the account's tasks (newest first, from `GET …/async/tasks`), submit one, follow its
 * status, open its result, cancel it. A task looked up by ID that is older than the listed page is
 * followed too, in this tab.
 */
import { useState } from 'preact/hooks';
import { ApiError, call, enc, GATEWAY, request } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { type Column, DataTable } from '../data-table.js';
import { formatDate } from '../format.js';
import type { TaskStatus } from '../model.js';
import { Badge, Button, Card, ErrorNote, Field, Page, useAction, useLoad } from '../ui.js';

const TONE: Record<string, 'ok' | 'warn' | 'bad' | 'info'> = { QUEUED: 'info', PROCESSING: 'info', COMPLETED: 'ok', CANCELED: 'warn' };
/** Tasks the page lists (the API's largest page). */
const LISTED = 100;

export function TasksPage() {
  return (
    <Page title="Async tasks" description="Requests that run in the background: submit, follow, read the result or cancel.">
      <Tasks />
    </Page>
  );
}

function Tasks() {
  const app = useApp();
  const base = `${GATEWAY}/account/${enc(app.account.name)}`;
  // Looked up by ID and not on the listed page (older, or mistyped: its row shows the error).
  const [lookedUp, setLookedUp] = useState<string[]>([]);
  const [open, setOpen] = useState<string | undefined>();
  const listed = useLoad(
    () => call<{ tasks: TaskStatus[] }>(`${base}/async/tasks?limit=${LISTED}`).then((page) => page.tasks),
    [base],
    1000,
  );
  const onPage = new Set((listed.data ?? []).map((t) => t.taskId));
  const others = lookedUp.filter((id) => !onPage.has(id));
  const looked = useLoad(
    () =>
      Promise.all(
        others.map((id) =>
          call<TaskStatus>(`${base}/async/task/${enc(id)}`).catch((err: unknown) => ({
            taskId: id,
            status: err instanceof ApiError ? err.code : 'ERROR',
            createdAt: 0,
            completedAt: null,
          })),
        ),
      ),
    [others.join(',')],
    1000,
  );
  const submitted = (id: string) => {
    listed.reload();
    setOpen(id);
  };
  const lookUp = (id: string) => {
    setLookedUp((list) => [id, ...list.filter((x) => x !== id)]);
    setOpen(id);
  };
  const rows = [...(listed.data ?? []), ...(others.length ? (looked.data ?? []) : [])];
  const statusOf = (id: string) => rows.find((t) => t.taskId === id)?.status;
  const reload = () => {
    listed.reload();
    looked.reload();
  };
  const mayChange = canAct(app, 'developer');
  const cancel = (t: TaskStatus) => void call(`${base}/async/task/${enc(t.taskId)}/cancel`, { method: 'POST' }).then(reload);
  const columns: Column<TaskStatus>[] = [
    { header: 'Task', cell: (t) => <code>{t.taskId}</code> },
    { header: 'Status', cell: (t) => <Badge tone={TONE[t.status] ?? 'bad'}>{t.status}</Badge> },
    { header: 'Created', cell: (t) => (t.createdAt ? formatDate(t.createdAt) : '—') },
    { header: 'Completed', cell: (t) => (t.completedAt ? formatDate(t.completedAt) : '—') },
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (t) => (
        <>
          <Button onClick={() => setOpen(t.taskId)} aria-label={`Result of ${t.taskId}`}>
            Result
          </Button>
          {mayChange && (t.status === 'QUEUED' || t.status === 'PROCESSING') && (
            <Button variant="danger" onClick={() => cancel(t)} aria-label={`Cancel ${t.taskId}`}>
              Cancel
            </Button>
          )}
        </>
      ),
    },
  ];
  return (
    <>
      <div class="grid two">
        {mayChange && <SubmitForm base={base} onTask={submitted} />}
        <LookupForm onTask={lookUp} />
      </div>
      <Card title="Tasks of this account">
        <ErrorNote error={listed.error} />
        <DataTable
          caption={`The account's newest ${LISTED} tasks, and those looked up`}
          columns={columns}
          rows={listed.data ? rows : undefined}
          rowKey={(t) => t.taskId}
          rowAttrs={(t) => ({ 'data-task': t.taskId })}
          loading
          empty="No tasks yet: submit one."
        />
      </Card>
      {open && <TaskResult base={base} taskId={open} status={statusOf(open)} />}
    </>
  );
}

function SubmitForm(props: { base: string; onTask: (id: string) => void }) {
  const app = useApp();
  const [model, setModel] = useState('upper');
  const [owner, setOwner] = useState(app.account.name);
  const [body, setBody] = useState('{"text": "hello"}');
  const action = useAction();
  return (
    <Card title="Submit a task">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const data = JSON.parse(body) as unknown;
            const id = await call<string>(`${GATEWAY}/account/${enc(owner)}/model/${enc(model)}/async/predict-with-config`, {
              body: { data },
            });
            props.onTask(id);
          });
        }}
      >
        <div class="row">
          <Field label="Service owner">
            {(id) => <input id={id} required value={owner} onInput={(e) => setOwner(e.currentTarget.value)} />}
          </Field>
          <Field label="Service">{(id) => <input id={id} required value={model} onInput={(e) => setModel(e.currentTarget.value)} />}</Field>
        </div>
        <Field label="Request data (JSON)">
          {(id) => <textarea id={id} class="mono" rows={3} value={body} onInput={(e) => setBody(e.currentTarget.value)} />}
        </Field>
        <ErrorNote error={action.error} />
        <Button type="submit" variant="primary" busy={action.busy}>
          Submit
        </Button>
      </form>
    </Card>
  );
}

function LookupForm(props: { onTask: (id: string) => void }) {
  const [id, setId] = useState('');
  return (
    <Card title="Look up a task">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (id.trim()) props.onTask(id.trim());
          setId('');
        }}
      >
        <Field label="Task ID">{(fid) => <input id={fid} required value={id} onInput={(e) => setId(e.currentTarget.value)} />}</Field>
        <Button type="submit">Open</Button>
      </form>
    </Card>
  );
}

/** A task's result (polled: the API answers 204 until it has one); a cancelled task has none. */
function TaskResult(props: { base: string; taskId: string; status: string | undefined }) {
  const action = useAction();
  const result = useLoad(
    async () => {
      const response = await request(`${props.base}/async/task/${enc(props.taskId)}/response`);
      const text = await response.text();
      return { status: response.status, text };
    },
    [props.taskId],
    1000,
  );
  const pretty = (text: string) => {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };
  return (
    <Card title={`Result of ${props.taskId}`}>
      <ErrorNote error={action.error ?? result.error} />
      {props.status === 'CANCELED' ? (
        <p class="muted" role="status">
          Cancelled: this task has no result.
        </p>
      ) : result.data?.status === 204 ? (
        <p class="muted" role="status">
          Not finished yet…
        </p>
      ) : result.data ? (
        <>
          <p class="small">HTTP {result.data.status}</p>
          <pre class="code" data-testid="task-result">
            {pretty(result.data.text)}
          </pre>
        </>
      ) : null}
    </Card>
  );
}
