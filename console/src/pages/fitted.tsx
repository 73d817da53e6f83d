/** Fitted services: derived services, their fitting jobs with live progress, datasets with upload. */
import { useState } from 'preact/hooks';
import { call, enc, GATE, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { formatBytes, formatDate } from '../format.js';
import type { Dataset, DerivedService, FitConfig, FitJob, Service } from '../model.js';
import { Badge, Button, Card, Empty, ErrorNote, Field, Loading, Page, useAction, useLoad } from '../ui.js';
import { NeedsKey } from '../working-key.js';

const JOB_TONE = { PENDING: 'info', RUNNING: 'info', SUCCESS: 'ok', FAILED: 'bad', CANCELED: 'warn' } as const;

export function FittedPage() {
  return (
    <Page
      title="Fitted services"
      description="Derive a service from a fittable one, upload a dataset, fit it and watch the job; a fitted service answers like any other."
    >
      <NeedsKey why="Fitting and datasets are part of the platform API, which takes an API key with Read data and Modify data.">
        <Fitted />
      </NeedsKey>
    </Page>
  );
}

function Fitted() {
  const app = useApp();
  const key = app.workingKey;
  const base = `${GATE}/account/${enc(app.account.name)}`;
  // Polled as often as the jobs: a job that succeeds makes its service fitted.
  const derived = useLoad(() => call(`${base}/derived`, { apiKey: key }).then((a) => items<DerivedService>(a)), [base, key], 1000);
  const jobs = useLoad(() => call(`${base}/job`, { apiKey: key }).then((a) => items<FitJob>(a)), [base, key], 1000);
  const datasets = useLoad(() => call(`${base}/dataset`, { apiKey: key }).then((a) => items<Dataset>(a)), [base, key]);
  const mayChange = canAct(app, 'developer');
  return (
    <>
      <ErrorNote error={derived.error ?? jobs.error ?? datasets.error} />
      <div class="grid two">
        <Card title="Derived services">
          {derived.loading && !derived.data ? (
            <Loading />
          ) : !derived.data?.length ? (
            <Empty>No derived service yet.</Empty>
          ) : (
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Base</th>
                  <th scope="col">State</th>
                  <th scope="col">Fitted</th>
                </tr>
              </thead>
              <tbody>
                {derived.data.map((d) => (
                  <tr key={d.id.modelId}>
                    <td>
                      <strong>{d.name}</strong>
                    </td>
                    <td>
                      {d.baseService.accountName}/{d.baseService.name}
                    </td>
                    <td data-fitted={String(d.fitted)}>
                      {d.fitted ? <Badge tone="ok">fitted</Badge> : <Badge tone="warn">not fitted</Badge>}
                    </td>
                    <td>{d.fittedAt ? formatDate(d.fittedAt) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {mayChange && <DeriveForm base={base} apiKey={key} onDone={derived.reload} />}
        </Card>
        <Card title="Datasets">
          {datasets.loading && !datasets.data ? (
            <Loading />
          ) : !datasets.data?.length ? (
            <Empty>No dataset yet.</Empty>
          ) : (
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Size</th>
                </tr>
              </thead>
              <tbody>
                {datasets.data.map((d) => (
                  <tr key={d.id.datasetId}>
                    <td>{d.id.datasetId}</td>
                    <td>{d.name}</td>
                    <td>
                      <code>{d.dataType}</code>
                    </td>
                    <td>{formatBytes(d.size)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {mayChange && <UploadForm base={base} apiKey={key} onDone={datasets.reload} />}
        </Card>
      </div>
      {mayChange && <FitForm base={base} apiKey={key} derived={derived.data ?? []} datasets={datasets.data ?? []} onDone={jobs.reload} />}
      <Card title="Fitting jobs">
        {jobs.loading && !jobs.data ? (
          <Loading />
        ) : !jobs.data?.length ? (
          <Empty>No fitting job yet.</Empty>
        ) : (
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Service</th>
                <th scope="col">Dataset</th>
                <th scope="col">Progress</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {jobs.data.map((j) => (
                <tr key={String(j.jobId)} data-job={String(j.jobId)}>
                  <td>{String(j.jobId)}</td>
                  <td>{j.service?.name ?? '—'}</td>
                  <td>{j.datasetId ?? '—'}</td>
                  <td>
                    <progress max={100} value={j.percentage} aria-label={`Job ${String(j.jobId)} progress`}>
                      {j.percentage}%
                    </progress>{' '}
                    <span class="small">{j.percentage}%</span>
                  </td>
                  <td>
                    <Badge tone={JOB_TONE[j.status]}>{j.status}</Badge>
                    {j.errorMessage && <div class="small bad">{j.errorMessage}</div>}
                  </td>
                  <td>{formatDate(j.createdAt)}</td>
                  <td>
                    {mayChange && !j.done && (
                      <Button
                        onClick={() =>
                          void call(`${base}/job/${enc(String(j.jobId))}/cancel`, { method: 'POST', apiKey: key }).then(jobs.reload)
                        }
                      >
                        Cancel
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}

function DeriveForm(props: { base: string; apiKey: string; onDone: () => void }) {
  const app = useApp();
  const services = useLoad(
    () =>
      call(`${props.base.replace('/api/platformgate', '/api/platformcore')}/services`).then((a) =>
        items<Service>(a).filter((s) => s.fittable),
      ),
    [app.account.name],
  );
  const [from, setFrom] = useState('');
  const [name, setName] = useState('');
  const action = useAction();
  const choices = services.data?.length ? services.data.map((s) => `${s.account ?? app.account.name}/${s.name}`) : [];
  const source = from || choices[0] || '';
  return (
    <form
      class="form inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          const [account, model] = source.split('/');
          await call(`${GATE}/account/${enc(account!)}/model/${enc(model!)}/derived`, {
            body: { name: name.trim() },
            apiKey: props.apiKey,
          });
          setName('');
          props.onDone();
        });
      }}
    >
      <h3 class="sub">Derive a service</h3>
      <div class="row">
        <Field label="From the fittable service" hint="account/service">
          {(id) =>
            choices.length ? (
              <select id={id} value={source} onChange={(e) => setFrom(e.currentTarget.value)}>
                {choices.map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </select>
            ) : (
              <input id={id} required placeholder="demo/text-classifier" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
            )
          }
        </Field>
        <Field label="Name of the new service">
          {(id) => <input id={id} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
      </div>
      <ErrorNote error={action.error} />
      <Button type="submit" busy={action.busy}>
        Derive
      </Button>
    </form>
  );
}

function UploadForm(props: { base: string; apiKey: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | undefined>();
  const action = useAction();
  return (
    <form
      class="form inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!file) return;
        void action.run(async () => {
          const query = new URLSearchParams({ name: name.trim() || file.name });
          const type = file.type || (file.name.endsWith('.json') || file.name.endsWith('.jsonl') ? 'application/json' : 'text/plain');
          await call(`${props.base}/dataset/raw?${query}`, { raw: new Blob([file], { type }), apiKey: props.apiKey });
          setName('');
          props.onDone();
        });
      }}
    >
      <h3 class="sub">Upload a dataset</h3>
      <div class="row">
        <Field label="File">{(id) => <input id={id} type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0])} />}</Field>
        <Field label="Name" hint="Default: the file's name">
          {(id) => <input id={id} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
      </div>
      <ErrorNote error={action.error} />
      <Button type="submit" busy={action.busy} disabled={!file}>
        Upload
      </Button>
    </form>
  );
}

function FitForm(props: { base: string; apiKey: string; derived: DerivedService[]; datasets: Dataset[]; onDone: () => void }) {
  const [service, setService] = useState('');
  const [dataset, setDataset] = useState('');
  const [config, setConfig] = useState('');
  const chosen = service || props.derived[0]?.name || '';
  const configs = useLoad(
    () =>
      chosen
        ? call(`${props.base}/model/${enc(chosen)}/fit-config`, { apiKey: props.apiKey }).then((a) => items<FitConfig>(a))
        : Promise.resolve([]),
    [chosen, props.apiKey],
  );
  const action = useAction();
  if (!props.derived.length || !props.datasets.length) return null;
  const datasetId = dataset || String(props.datasets[0]!.id.datasetId);
  return (
    <Card title="Start a fit">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const body: Record<string, unknown> = { datasetId: Number(datasetId) };
            if (config) body.configId = Number(config);
            await call(`${props.base}/model/${enc(chosen)}/fit`, { body, apiKey: props.apiKey });
            props.onDone();
          });
        }}
      >
        <div class="row">
          <Field label="Derived service">
            {(id) => (
              <select id={id} value={chosen} onChange={(e) => setService(e.currentTarget.value)}>
                {props.derived.map((d) => (
                  <option key={d.name}>{d.name}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Dataset">
            {(id) => (
              <select id={id} value={datasetId} onChange={(e) => setDataset(e.currentTarget.value)}>
                {props.datasets.map((d) => (
                  <option key={d.id.datasetId} value={String(d.id.datasetId)}>
                    {d.id.datasetId}: {d.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Fitting config">
            {(id) => (
              <select id={id} value={config} onChange={(e) => setConfig(e.currentTarget.value)}>
                <option value="">the default</option>
                {(configs.data ?? []).map((c) => (
                  <option key={c.id.configId} value={String(c.id.configId)}>
                    {c.name}
                    {c.isDefault ? ' (default)' : ''}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <ErrorNote error={action.error} />
        <Button type="submit" variant="primary" busy={action.busy}>
          Start fitting
        </Button>
      </form>
    </Card>
  );
}
