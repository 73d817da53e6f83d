/** Fitted services: derived services, their fitting jobs with live progress, datasets with upload. */
import { useState } from 'preact/hooks';
import { call, enc, GATE, items } from '../api.js';
import { canAct, useApp } from '../app-state.js';
import { type Column, DataTable } from '../data-table.js';
import { formatBytes, formatDate } from '../format.js';
import type { Dataset, DerivedService, FitConfig, FitJob, Service } from '../model.js';
import { Badge, Button, Card, ErrorNote, Field, Page, useAction, useLoad } from '../ui.js';

const JOB_TONE = { PENDING: 'info', RUNNING: 'info', SUCCESS: 'ok', FAILED: 'bad', CANCELED: 'warn' } as const;

const DERIVED_COLUMNS: Column<DerivedService>[] = [
  { header: 'Name', cell: (d) => <strong>{d.name}</strong> },
  { header: 'Base', cell: (d) => `${d.baseService.accountName}/${d.baseService.name}` },
  {
    header: 'State',
    cell: (d) => (d.fitted ? <Badge tone="ok">fitted</Badge> : <Badge tone="warn">not fitted</Badge>),
    cellAttrs: (d) => ({ 'data-fitted': String(d.fitted) }),
  },
  { header: 'Fitted', cell: (d) => (d.fittedAt ? formatDate(d.fittedAt) : '—') },
];

const DATASET_COLUMNS: Column<Dataset>[] = [
  { header: 'ID', cell: (d) => d.id.datasetId },
  { header: 'Name', cell: (d) => d.name },
  { header: 'Type', cell: (d) => <code>{d.dataType}</code> },
  { header: 'Size', cell: (d) => formatBytes(d.size) },
];

const JOB_COLUMNS: Column<FitJob>[] = [
  { header: 'Job', cell: (j) => String(j.jobId) },
  { header: 'Service', cell: (j) => j.service?.name ?? '—' },
  { header: 'Dataset', cell: (j) => j.datasetId ?? '—' },
  {
    header: 'Progress',
    cell: (j) => (
      <>
        <progress max={100} value={j.percentage} aria-label={`Job ${String(j.jobId)} progress`}>
          {j.percentage}%
        </progress>{' '}
        <span class="small">{j.percentage}%</span>
      </>
    ),
  },
  {
    header: 'Status',
    cell: (j) => (
      <>
        <Badge tone={JOB_TONE[j.status]}>{j.status}</Badge>
        {j.errorMessage && <div class="small bad">{j.errorMessage}</div>}
      </>
    ),
  },
  { header: 'Started', cell: (j) => formatDate(j.createdAt) },
];

export function FittedPage() {
  return (
    <Page
      title="Fitted services"
      description="Derive a service from a fittable one, upload a dataset, fit it and watch the job; a fitted service answers like any other."
    >
      <Fitted />
    </Page>
  );
}

function Fitted() {
  const app = useApp();
  const base = `${GATE}/account/${enc(app.account.name)}`;
  // Polled as often as the jobs: a job that succeeds makes its service fitted.
  const derived = useLoad(() => call(`${base}/derived`).then((a) => items<DerivedService>(a)), [base], 1000);
  const jobs = useLoad(() => call(`${base}/job`).then((a) => items<FitJob>(a)), [base], 1000);
  const datasets = useLoad(() => call(`${base}/dataset`).then((a) => items<Dataset>(a)), [base]);
  const mayChange = canAct(app, 'developer');
  const cancel = (j: FitJob) => void call(`${base}/job/${enc(String(j.jobId))}/cancel`, { method: 'POST' }).then(jobs.reload);
  const jobColumns: Column<FitJob>[] = [
    ...JOB_COLUMNS,
    {
      header: 'Actions',
      hideHeader: true,
      class: 'actions',
      cell: (j) => mayChange && !j.done && <Button onClick={() => cancel(j)}>Cancel</Button>,
    },
  ];
  return (
    <>
      <ErrorNote error={derived.error ?? jobs.error ?? datasets.error} />
      <div class="grid two">
        <Card title="Derived services">
          <DataTable
            caption="Derived services"
            columns={DERIVED_COLUMNS}
            rows={derived.data}
            rowKey={(d) => d.id.modelId}
            loading={derived.loading}
            empty="No derived service yet."
          />
          {mayChange && <DeriveForm base={base} onDone={derived.reload} />}
        </Card>
        <Card title="Datasets">
          <DataTable
            caption="Datasets"
            columns={DATASET_COLUMNS}
            rows={datasets.data}
            rowKey={(d) => d.id.datasetId}
            loading={datasets.loading}
            empty="No dataset yet."
          />
          {mayChange && <UploadForm base={base} onDone={datasets.reload} />}
        </Card>
      </div>
      {mayChange && <FitForm base={base} derived={derived.data ?? []} datasets={datasets.data ?? []} onDone={jobs.reload} />}
      <Card title="Fitting jobs">
        <DataTable
          caption="Fitting jobs"
          columns={jobColumns}
          rows={jobs.data}
          rowKey={(j) => String(j.jobId)}
          rowAttrs={(j) => ({ 'data-job': String(j.jobId) })}
          loading={jobs.loading}
          empty="No fitting job yet."
        />
      </Card>
    </>
  );
}

function DeriveForm(props: { base: string; onDone: () => void }) {
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

function UploadForm(props: { base: string; onDone: () => void }) {
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
          await call(`${props.base}/dataset/raw?${query}`, { raw: new Blob([file], { type }) });
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

function FitForm(props: { base: string; derived: DerivedService[]; datasets: Dataset[]; onDone: () => void }) {
  const [service, setService] = useState('');
  const [dataset, setDataset] = useState('');
  const [config, setConfig] = useState('');
  const chosen = service || props.derived[0]?.name || '';
  const configs = useLoad(
    () => (chosen ? call(`${props.base}/model/${enc(chosen)}/fit-config`).then((a) => items<FitConfig>(a)) : Promise.resolve([])),
    [chosen],
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
            await call(`${props.base}/model/${enc(chosen)}/fit`, { body });
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
