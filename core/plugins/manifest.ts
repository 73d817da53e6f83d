/**
 * What a built-in plugin tells the core before it is loaded: its `plugin.json`, next to its
 * index. The configuration is checked synchronously, before any plugin module is imported, and some
 * of its rules depend on what the enabled plugins are (whether they keep state several workers would
 * split; which one serves services with an `upstream` block): they read these declarations, so the
 * core names no plugin.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { BUILTIN_DIR } from './builtin.js';

export interface PluginManifest {
  /**
   * Whether the plugin keeps state a later request must find (tasks, datasets, counts) in the
   * gateway's store: with the memory store and several workers that state would be split.
   */
  readonly stateful: boolean;
  /** An option that makes a stateful plugin stateless: the JSON Pointer into its options and the value. */
  readonly statelessWhen?: { readonly option: string; readonly equals: unknown };
  /** Whether the plugin runs in-process instances for the services that declare an `upstream` block. */
  readonly servesUpstreams?: boolean;
}

const cache = new Map<string, PluginManifest | undefined>();

/** The manifest of built-in plugin `name`; undefined when there is no such plugin (the loader reports it). */
export function builtinManifest(name: string): PluginManifest | undefined {
  if (!cache.has(name)) {
    const path = `${BUILTIN_DIR}${name}/plugin.json`;
    cache.set(
      name,
      /^[a-z0-9][a-z0-9-]*$/.test(name) && existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as PluginManifest) : undefined,
    );
  }
  return cache.get(name);
}

/** The built-in plugins (folders under plugins/ with a manifest; `_shared` and the like hold helpers only). */
export function builtinPluginNames(): string[] {
  return readdirSync(BUILTIN_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && builtinManifest(entry.name))
    .map((entry) => entry.name)
    .sort();
}

/** Whether built-in plugin `name` keeps state with these options (custom plugins count as stateful: the core cannot know). */
export function keepsState(name: string, options: unknown): boolean {
  const manifest = builtinManifest(name);
  if (!manifest?.stateful) return false;
  const when = manifest.statelessWhen;
  return !(when && optionAt(options, when.option) === when.equals);
}

/** The setting that makes built-in plugin `name` stateless, as the operator writes it (`plugins.options.x.y: false`). */
export function statelessSetting(name: string): string | undefined {
  const when = builtinManifest(name)?.statelessWhen;
  if (!when) return undefined;
  return `plugins.options.${name}${when.option.split('/').join('.')}: ${JSON.stringify(when.equals)}`;
}

function optionAt(options: unknown, pointer: string): unknown {
  let value = options;
  for (const key of pointer.split('/').slice(1)) {
    if (!value || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
