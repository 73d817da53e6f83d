/** The editor of a list of budgets (account or key): unit, limit, period. */
import type { Budget } from './model.js';
import { Button } from './ui.js';

export function describeBudget(b: Budget): string {
  const period = b.period === 'total' ? 'in total' : `per ${b.period}`;
  return b.unit === 'money' ? `${b.limit} (money) ${period}` : `${b.limit.toLocaleString()} tokens ${period}`;
}

export function BudgetsEditor(props: { value: Budget[]; onChange: (next: Budget[]) => void; idPrefix: string }) {
  const set = (index: number, patch: Partial<Budget>) => props.onChange(props.value.map((b, i) => (i === index ? { ...b, ...patch } : b)));
  return (
    <fieldset class="fieldset">
      <legend>Budgets</legend>
      {props.value.length === 0 && <p class="hint">No budget: spending is limited only by the account's budgets.</p>}
      {props.value.map((b, index) => (
        <div class="row" key={index}>
          <label class="inline">
            <span>Limit</span>
            <input
              type="number"
              min="0"
              step="any"
              required
              value={b.limit}
              onInput={(e) => set(index, { limit: Number(e.currentTarget.value) })}
              id={`${props.idPrefix}-limit-${index}`}
            />
          </label>
          <label class="inline">
            <span>Unit</span>
            <select value={b.unit} onChange={(e) => set(index, { unit: e.currentTarget.value as Budget['unit'] })}>
              <option value="tokens">tokens</option>
              <option value="money">money</option>
            </select>
          </label>
          <label class="inline">
            <span>Period</span>
            <select value={b.period} onChange={(e) => set(index, { period: e.currentTarget.value as Budget['period'] })}>
              <option value="day">per day (UTC)</option>
              <option value="month">per month (UTC)</option>
              <option value="total">in total</option>
            </select>
          </label>
          <Button
            variant="ghost"
            onClick={() => props.onChange(props.value.filter((_, i) => i !== index))}
            aria-label={`Remove budget ${index + 1}`}
          >
            Remove
          </Button>
        </div>
      ))}
      <Button onClick={() => props.onChange([...props.value, { unit: 'tokens', limit: 100000, period: 'month' }])}>Add a budget</Button>
    </fieldset>
  );
}
