/**
 * Bar charts in plain SVG: two small charts do not need a charting library, and SVG elements need no
 * inline style (the console's CSP allows none). Each chart has a text equivalent for screen readers.
 */

export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 640;
const HEIGHT = 220;
const PAD = { left: 56, right: 12, top: 12, bottom: 36 };

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(max));
  return Math.ceil(max / step) * step;
}

const short = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(Math.round(n * 100) / 100);

/** Vertical bars over time (one per day). */
export function ColumnChart(props: { title: string; bars: Bar[]; format: (n: number) => string }) {
  const max = niceMax(Math.max(0, ...props.bars.map((b) => b.value)));
  const inner = { w: WIDTH - PAD.left - PAD.right, h: HEIGHT - PAD.top - PAD.bottom };
  const slot = inner.w / Math.max(1, props.bars.length);
  const summary = props.bars.map((b) => `${b.label}: ${props.format(b.value)}`).join('; ');
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${props.title}. ${summary || 'no data'}`}>
        <title>{props.title}</title>
        {[0, 0.5, 1].map((f) => {
          const y = PAD.top + inner.h * (1 - f);
          return (
            <g key={f}>
              <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y} y2={y} class="grid-line" />
              <text x={PAD.left - 6} y={y + 4} class="axis" text-anchor="end">
                {short(max * f)}
              </text>
            </g>
          );
        })}
        {props.bars.map((b, i) => {
          const h = (b.value / max) * inner.h;
          const x = PAD.left + i * slot + slot * 0.15;
          return (
            <g key={b.label}>
              <rect x={x} y={PAD.top + inner.h - h} width={slot * 0.7} height={Math.max(h, b.value > 0 ? 1 : 0)} class="bar" rx={2}>
                <title>{`${b.label}: ${props.format(b.value)}`}</title>
              </rect>
              {(props.bars.length <= 10 || i % Math.ceil(props.bars.length / 10) === 0) && (
                <text x={x + slot * 0.35} y={HEIGHT - PAD.bottom + 16} class="axis" text-anchor="middle">
                  {b.label.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="sr-only">{summary}</figcaption>
    </figure>
  );
}

/** Horizontal bars, largest first (one per model). */
export function BarList(props: { title: string; bars: Bar[]; format: (n: number) => string }) {
  const max = Math.max(0, ...props.bars.map((b) => b.value)) || 1;
  return (
    <figure class="barlist" aria-label={props.title}>
      <ul>
        {[...props.bars]
          .sort((a, b) => b.value - a.value)
          .map((b) => (
            <li key={b.label}>
              <span class="barlist-label">{b.label}</span>
              <svg viewBox="0 0 100 8" preserveAspectRatio="none" class="barlist-track" aria-hidden="true">
                <rect x={0} y={0} width={(b.value / max) * 100} height={8} class="bar" rx={1} />
              </svg>
              <span class="barlist-value">{props.format(b.value)}</span>
            </li>
          ))}
      </ul>
    </figure>
  );
}
