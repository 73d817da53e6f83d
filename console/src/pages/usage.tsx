/** Usage and spend: charts by day and by model, a table by key, CSV export. */
import { useState } from 'preact/hooks';
import { accountPath, call, items } from '../api.js';
import { useApp } from '../app-state.js';
import { BarList, ColumnChart, type Bar } from '../charts.js';
import { type Column, DataTable } from '../data-table.js';
import { formatMoney, formatNumber, utcDay } from '../format.js';
import type { ApiKey, UsageRow } from '../model.js';
import { Button, Card, Empty, ErrorNote, Field, Loading, Page, useLoad } from '../ui.js';

type Metric = 'requests' | 'tokens' | 'cost';
const METRICS: { id: Metric; label: string }[] = [
  { id: 'requests', label: 'Requests' },
  { id: 'tokens', label: 'Tokens' },
  { id: 'cost', label: 'Spend' },
];

const valueOf = (row: UsageRow, metric: Metric) =>
  metric === 'requests' ? row.requests : metric === 'tokens' ? row.inputTokens + row.outputTokens : (row.cost ?? 0);

function sumBy(rows: UsageRow[], label: (row: UsageRow) => string, metric: Metric): Bar[] {
  const sums = new Map<string, number>();
  for (const row of rows) sums.set(label(row), (sums.get(label(row)) ?? 0) + valueOf(row, metric));
  return [...sums].map(([l, value]) => ({ label: l, value }));
}

/** Every day from `from` to `to`, so quiet days show as empty bars. */
function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 366; t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

const csvCell = (value: unknown) => {
  const text = value === undefined || value === null ? '' : String(value);
  // Quote, and defuse spreadsheet formulas in names a user chose.
  return /^[=+\-@]/.test(text) ? `"'${text.replace(/"/g, '""')}"` : /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

export function UsagePage() {
  const app = useApp();
  const [from, setFrom] = useState(utcDay(-29));
  const [to, setTo] = useState(utcDay(0));
  const [metric, setMetric] = useState<Metric>('requests');
  const base = `${accountPath(app.account.name)}/usage`;
  const query = (groupBy: string) => `${base}?${new URLSearchParams({ from, to, groupBy })}`;
  const byDayModel = useLoad(() => call(query('day,model,service')).then((a) => items<UsageRow>(a)), [base, from, to], 10_000);
  const byKey = useLoad(() => call(query('key')).then((a) => items<UsageRow>(a)), [base, from, to], 10_000);
  const keys = useLoad(() => call(`${accountPath(app.account.name)}/api-keys`).then((a) => items<ApiKey>(a)), [app.account.name]);
  /** Usage names a key by its ID (`key_…`, `config:<name>` for a config-file key, `console:<email>` for a person's console session). */
  const keyName = (id: string | undefined) => {
    if (!id) return 'no key (billing charges)';
    const key = keys.data?.find((k) => k.id === id);
    if (key) return key.name;
    if (id.startsWith('config:')) return `${id.slice('config:'.length)} (config)`;
    if (id.startsWith('console:')) return `${id.slice('console:'.length)} (console)`;
    return `${id} (removed)`;
  };
  const rows = byDayModel.data ?? [];
  const currency = rows.find((r) => r.currency)?.currency ?? 'USD';
  const keyColumns: Column<UsageRow>[] = [
    { header: 'Key', cell: (r) => keyName(r.key) },
    { header: 'Requests', class: 'num', cell: (r) => formatNumber(r.requests) },
    { header: 'Input tokens', class: 'num', cell: (r) => formatNumber(r.inputTokens) },
    { header: 'Output tokens', class: 'num', cell: (r) => formatNumber(r.outputTokens) },
    { header: 'Spend', class: 'num', cell: (r) => formatMoney(r.cost, r.currency ?? currency) },
  ];
  const format = (n: number) => (metric === 'cost' ? formatMoney(n, currency) : formatNumber(n));
  const dayBars = (() => {
    const sums = new Map(sumBy(rows, (r) => r.day ?? '', metric).map((b) => [b.label, b.value]));
    return days(from, to).map((d) => ({ label: d, value: sums.get(d) ?? 0 }));
  })();
  const totals = rows.reduce(
    (t, r) => ({ requests: t.requests + r.requests, tokens: t.tokens + r.inputTokens + r.outputTokens, cost: t.cost + (r.cost ?? 0) }),
    { requests: 0, tokens: 0, cost: 0 },
  );

  const exportCsv = () => {
    const header = ['day', 'model', 'service', 'requests', 'inputTokens', 'outputTokens', 'cost', 'currency'];
    const lines = [
      header.join(','),
      ...rows.map((r) =>
        [r.day, r.model, r.requests, r.inputTokens, r.outputTokens, r.cost ?? 0, r.currency ?? currency].map(csvCell).join(','),
      ),
    ];
    const url = URL.createObjectURL(new Blob([`${lines.join('\n')}\n`], { type: 'text/csv' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = `usage-${app.account.name}-${from}-${to}.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  return (
    <Page
      title="Usage and spend"
      description="Requests, tokens and cost of this account by day, model and key (UTC days)."
      actions={
        <Button onClick={exportCsv} disabled={!rows.length}>
          Export CSV
        </Button>
      }
    >
      <form class="toolbar" onSubmit={(e) => e.preventDefault()}>
        <Field label="From">
          {(id) => <input id={id} type="date" value={from} max={to} onInput={(e) => setFrom(e.currentTarget.value)} />}
        </Field>
        <Field label="To">
          {(id) => <input id={id} type="date" value={to} min={from} onInput={(e) => setTo(e.currentTarget.value)} />}
        </Field>
        <div class="segmented" role="radiogroup" aria-label="Measure">
          {METRICS.map((m) => (
            <button
              type="button"
              role="radio"
              aria-checked={metric === m.id}
              class={metric === m.id ? 'on' : ''}
              key={m.id}
              onClick={() => setMetric(m.id)}
            >
              {m.label}
            </button>
          ))}
        </div>
      </form>
      <ErrorNote error={byDayModel.error ?? byKey.error} />
      <div class="stats">
        <div class="stat">
          <span class="stat-label">Requests</span>
          <span class="stat-value" data-testid="total-requests">
            {formatNumber(totals.requests)}
          </span>
        </div>
        <div class="stat">
          <span class="stat-label">Tokens</span>
          <span class="stat-value">{formatNumber(totals.tokens)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Spend</span>
          <span class="stat-value">{formatMoney(totals.cost, currency)}</span>
        </div>
      </div>
      {byDayModel.loading && !byDayModel.data ? (
        <Loading />
      ) : (
        <div class="grid two wide-first">
          <Card title={`${METRICS.find((m) => m.id === metric)!.label} by day`}>
            <ColumnChart title={`${metric} by day`} bars={dayBars} format={format} />
          </Card>
          <Card title={`${METRICS.find((m) => m.id === metric)!.label} by model`}>
            {rows.length ? (
              <BarList title={`${metric} by model`} bars={sumBy(rows, (r) => r.model || r.service || 'unknown', metric)} format={format} />
            ) : (
              <Empty>No requests in this period.</Empty>
            )}
          </Card>
        </div>
      )}
      <Card title="By key">
        <DataTable
          caption="Usage by key"
          columns={keyColumns}
          rows={byKey.data}
          rowKey={(r) => r.key ?? r.keyName ?? ''}
          empty="No requests in this period."
        />
      </Card>
    </Page>
  );
}
