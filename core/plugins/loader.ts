import { existsSync } from 'node:fs';
import Router from '@koa/router';
import type Koa from 'koa';
import { BootError } from '../errors.js';
import { runnableModule } from '../modules/build-paths.js';
import { importModule } from '../modules/ts-modules.js';
import { compileSchema, formatAjvErrors } from '../validation/ajv.js';
import { instantiatePlugin, type PluginContext, type PluginDefinition, type PluginInstance } from './define-plugin.js';
import { builtinPluginPath } from './builtin.js';
import { mountPluginRouter } from './mount-router.js';

type AnyPlugin = PluginDefinition<any>;

export interface LoadedPlugin {
  definition: AnyPlugin;
  context: PluginContext<any>;
  /** This gateway's instance of the plugin (its `start` and `stop`). */
  instance: PluginInstance;
  source: string;
  /** The router its routes were declared on, when it has routes (read by tooling such as the OpenAPI coverage test). */
  router?: Router;
}

const PLUGIN_NAME = /^[a-z0-9][a-z0-9-]*$/;

export interface PluginSources {
  enabled: readonly string[];
  custom: readonly { path: string; enabled: boolean }[];
  options: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/**
 * Imports the enabled built-in plugins and the custom ones named by path, checks each definition,
 * validates its options, and mounts its routes on its own router. Any problem stops the boot with a
 * coded BootError naming the plugin.
 */
export async function loadPlugins(
  app: Koa,
  sources: PluginSources,
  makeContext: (name: string, options: Record<string, unknown>) => PluginContext<any>,
): Promise<LoadedPlugin[]> {
  const requested = [
    ...sources.enabled.map((name) => ({ source: builtinPluginPath(name), expectedName: name as string | undefined })),
    ...sources.custom.filter((c) => c.enabled).map((c) => ({ source: runnableModule(c.path), expectedName: undefined })),
  ];
  const loaded: LoadedPlugin[] = [];
  const names = new Set<string>();

  for (const { source, expectedName } of requested) {
    const definition = await importPlugin(source, expectedName);
    if (names.has(definition.name)) {
      throw new BootError('PLUGIN_DUPLICATE', `plugin '${definition.name}' is loaded twice (second time from ${source})`);
    }
    names.add(definition.name);
    const options = structuredClone({ ...(sources.options[definition.name] ?? {}) }) as Record<string, unknown>;
    if (definition.configSchema) {
      let validate;
      try {
        validate = compileSchema('settings', definition.configSchema);
      } catch (err) {
        throw new BootError('PLUGIN_INVALID', `plugin '${definition.name}' has an invalid configSchema`, [(err as Error).message]);
      }
      if (!validate(options)) {
        throw new BootError(
          'PLUGIN_OPTIONS_INVALID',
          `options of plugin '${definition.name}' are invalid`,
          formatAjvErrors(validate.errors).map((p) => `plugins.options.${definition.name}${p}`),
        );
      }
    }
    const context = makeContext(definition.name, options);
    let instance: PluginInstance;
    try {
      instance = instantiatePlugin(definition, context);
    } catch (err) {
      throw new BootError(
        'PLUGIN_INVALID',
        `plugin '${definition.name}' failed to create its instance: ${(err as Error).message}`,
        [],
        err,
      );
    }
    const problems = instanceProblems(instance);
    if (problems.length) throw new BootError('PLUGIN_INVALID', `plugin '${definition.name}' made an invalid instance`, problems);
    let router: Router | undefined;
    if (instance.routes) {
      router = new Router();
      try {
        instance.routes(router);
      } catch (err) {
        throw new BootError(
          'PLUGIN_INVALID',
          `plugin '${definition.name}' failed to declare its routes: ${(err as Error).message}`,
          [],
          err,
        );
      }
      mountPluginRouter(app, router, definition.name);
    }
    loaded.push({ definition, context, instance, source, ...(router ? { router } : {}) });
  }
  for (const name of Object.keys(sources.options)) {
    if (!names.has(name)) throw new BootError('PLUGIN_OPTIONS_INVALID', `plugins.options names '${name}', which is not an enabled plugin`);
  }
  return loaded;
}

async function importPlugin(source: string, expectedName: string | undefined): Promise<AnyPlugin> {
  if (expectedName !== undefined && (!PLUGIN_NAME.test(expectedName) || !existsSync(source))) {
    throw new BootError('PLUGIN_NOT_FOUND', `no built-in plugin named '${expectedName}' (looked for ${source})`);
  }
  if (!existsSync(source)) throw new BootError('PLUGIN_NOT_FOUND', `custom plugin module ${source} does not exist`);
  let module: { default?: unknown };
  try {
    module = (await importModule(source)) as { default?: unknown };
  } catch (err) {
    throw new BootError('PLUGIN_INVALID', `plugin module ${source} failed to load: ${(err as Error).message}`, [], err);
  }
  const definition = module.default as Partial<AnyPlugin> | undefined;
  const problems: string[] = [];
  if (!definition || typeof definition !== 'object') problems.push('the module has no default export made with definePlugin({...})');
  else {
    if (typeof definition.name !== 'string' || !PLUGIN_NAME.test(definition.name))
      problems.push(`name must be kebab-case text, got ${JSON.stringify(definition.name)}`);
    for (const hook of ['create', 'routes', 'start', 'close'] as const) {
      if (definition[hook] !== undefined && typeof definition[hook] !== 'function') problems.push(`${hook} must be a function`);
    }
    if (definition.create && (definition.routes || definition.start || definition.close)) {
      problems.push('a plugin with create() keeps routes, start and stop on its instance, not beside create()');
    }
    if (!definition.create && !definition.routes && !definition.start) problems.push('a plugin needs create(), routes() or start()');
    if (expectedName && definition.name !== expectedName)
      problems.push(`name '${definition.name}' differs from its folder '${expectedName}'`);
  }
  if (problems.length) throw new BootError('PLUGIN_INVALID', `plugin ${expectedName ?? source} is not a valid plugin`, problems);
  return definition as AnyPlugin;
}

function instanceProblems(instance: unknown): string[] {
  if (!instance || typeof instance !== 'object') return ['create() must return an object with routes(), start() or stop()'];
  const hooks = instance as Record<string, unknown>;
  const problems = (['routes', 'start', 'stop'] as const)
    .filter((hook) => hooks[hook] !== undefined && typeof hooks[hook] !== 'function')
    .map((hook) => `${hook} must be a function`);
  if (!problems.length && !hooks.routes && !hooks.start) problems.push('an instance needs routes() or start()');
  return problems;
}
