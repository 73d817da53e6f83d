/** Dates, numbers and money as the console shows them. */

export function toDate(value: string | number | null | undefined): Date | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function formatDate(value: string | number | null | undefined): string {
  const date = toDate(value);
  return date ? date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';
}

export function formatNumber(value: number | undefined): string {
  return (value ?? 0).toLocaleString(undefined, { maximumFractionDigits: 2 });
}

export function formatMoney(value: number | undefined, currency = 'USD'): string {
  try {
    const amount = value ?? 0;
    // A few tokens cost fractions of a cent: show them rather than $0.00.
    const digits = amount > 0 && amount < 0.01 ? { maximumSignificantDigits: 2 } : { maximumFractionDigits: 4 };
    return amount.toLocaleString(undefined, { style: 'currency', currency, ...digits });
  } catch {
    return `${formatNumber(value)} ${currency}`;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `YYYY-MM-DD` of a UTC day `offset` days from today. */
export function utcDay(offset = 0): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}
