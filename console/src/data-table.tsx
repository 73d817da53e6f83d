/**
 * The one table of the console: a caption for screen readers, column headers with `scope`, one row
 * per item, and the loading and empty states in place of the table. Pages describe their columns.
 */
import type { ComponentChildren, JSX } from 'preact';
import { Empty, Loading } from './ui.js';

export interface Column<T> {
  /** The header's text; for an action column, read by screen readers only (`hideHeader`). */
  header: string;
  hideHeader?: boolean;
  /** Class of the header and of every cell (`num` aligns numbers, `actions` holds buttons, `small`). */
  class?: string;
  cell(row: T): ComponentChildren;
  /** Attributes a cell carries for the tests or for styling (e.g. `data-fitted`). */
  cellAttrs?(row: T): Record<`data-${string}`, string>;
}

export interface DataTableProps<T> {
  /** What the table lists, for screen readers (the caption is visually hidden). */
  caption: string;
  columns: Column<T>[];
  /** `undefined` while the first load runs. */
  rows: T[] | undefined;
  rowKey(row: T): string | number;
  rowAttrs?(row: T): Record<`data-${string}`, string>;
  /** Shown when the list is empty. */
  empty: ComponentChildren;
  /** Shows "Loading…" while `rows` is undefined (otherwise the empty state). */
  loading?: boolean;
}

export function DataTable<T>(props: DataTableProps<T>): JSX.Element {
  if (!props.rows) return props.loading ? <Loading /> : <Empty>{props.empty}</Empty>;
  if (!props.rows.length) return <Empty>{props.empty}</Empty>;
  return (
    <table class="table">
      <caption class="sr-only">{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col" class={c.class} key={c.header}>
              {c.hideHeader ? <span class="sr-only">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)} {...props.rowAttrs?.(row)}>
            {props.columns.map((c) => (
              <td class={c.class} key={c.header} {...c.cellAttrs?.(row)}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
