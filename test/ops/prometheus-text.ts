/**
 * Reads samples out of the Prometheus text format: the sum of the values of every sample of
 * `name` whose labels include `labels` (0 when there is none).
 */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = parseLabels(match[2] ?? '');
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(match[3]);
  }
  return sum;
}

/** Whether the exposition declares the family (`# TYPE name ...`). */
export function hasFamily(text: string, name: string): boolean {
  return text.includes(`# TYPE ${name} `);
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
  return labels;
}
