import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of docs/design.md: core never imports a plugin; a plugin imports core only through
 * its public surface (core/plugins/index.ts) and never imports another plugin (shared helpers live in
 * plugins/_shared/). The protocol (proto/) is a leaf that imports nothing of the project, and the SDK
 * imports only itself and the protocol. Checked on the import statements of every source file.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PUBLIC_SURFACE = join(root, 'core', 'plugins', 'index.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative import targets of a file, resolved to .ts paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'));
}

/** Package names (`@scope/name` or `name`) a file imports. */
function packageImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return specifiers.filter((s) => !s.startsWith('.')).map((s) => s.split('/').slice(0, s.startsWith('@') ? 2 : 1).join('/'));
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);
const rel = (path: string) => relative(root, path);

describe('architecture', () => {
  it('core never imports a plugin', () => {
    const violations = sourceFiles(join(root, 'core')).flatMap((file) =>
      imports(file).filter((target) => inside(target, join(root, 'plugins'))).map((target) => `${rel(file)} → ${rel(target)}`));
    expect(violations).toEqual([]);
  });

  it('plugins import core only through core/plugins/index.ts and never each other', () => {
    const pluginsDir = join(root, 'plugins');
    const violations: string[] = [];
    for (const folder of readdirSync(pluginsDir)) {
      const own = join(pluginsDir, folder);
      for (const file of sourceFiles(own)) {
        for (const target of imports(file)) {
          const intoCore = inside(target, join(root, 'core'));
          const intoOtherPlugin = inside(target, pluginsDir) && !inside(target, own) && !inside(target, join(pluginsDir, '_shared'));
          if ((intoCore && target !== PUBLIC_SURFACE) || intoOtherPlugin) violations.push(`${rel(file)} → ${rel(target)}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('the example custom plugin uses only the public surface', () => {
    const file = join(root, 'examples', 'custom-plugin', 'index.ts');
    expect(imports(file).filter((t) => inside(t, join(root, 'core')) && t !== PUBLIC_SURFACE)).toEqual([]);
  });

  it('the protocol imports nothing outside proto/', () => {
    const protoDir = join(root, 'proto');
    const violations = sourceFiles(protoDir).flatMap((file) =>
      imports(file).filter((target) => !inside(target, protoDir)).map((target) => `${rel(file)} → ${rel(target)}`));
    expect(violations).toEqual([]);
  });

  it('the SDK imports only itself, the protocol package and its declared dependencies', () => {
    const sdkDir = join(root, 'sdk');
    const manifest = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const allowed = new Set(Object.keys(manifest.dependencies));
    expect(allowed).toContain('@model-gateway/protocol');
    const violations = sourceFiles(sdkDir).filter((file) => !inside(file, join(sdkDir, 'dist'))).flatMap((file) => [
      ...imports(file).filter((target) => !inside(target, sdkDir)).map((target) => `${rel(file)} → ${rel(target)}`),
      ...packageImports(file).filter((name) => !name.startsWith('node:') && !allowed.has(name)).map((name) => `${rel(file)} → ${name}`),
    ]);
    expect(violations).toEqual([]);
  });
});
