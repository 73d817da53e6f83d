import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of docs/design.md: core never imports a plugin; a plugin imports core only through
 * its public surface (core/plugins/index.ts) and never imports another plugin (shared helpers live in
 * plugins/_shared/). The protocol (proto/) is a leaf that imports nothing of the project, and the SDK
 * imports only itself and the protocol. The Gate (core/gate/) never imports its gRPC transport (core/grpc/).
 * Checked on the import statements of every source file.
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
  return specifiers
    .filter((s) => !s.startsWith('.'))
    .map((s) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);
const rel = (path: string) => relative(root, path);

describe('architecture', () => {
  it('core never imports a plugin', () => {
    const violations = sourceFiles(join(root, 'core')).flatMap((file) =>
      imports(file)
        .filter((target) => inside(target, join(root, 'plugins')))
        .map((target) => `${rel(file)} → ${rel(target)}`),
    );
    expect(violations).toEqual([]);
  });

  it('the Gate never imports its gRPC transport (core/grpc/), except the ApiErrorProto mapping both speak', () => {
    const grpcDir = join(root, 'core', 'grpc');
    const allowed = join(grpcDir, 'api-error.ts');
    const violations = sourceFiles(join(root, 'core', 'gate')).flatMap((file) =>
      imports(file)
        .filter((target) => inside(target, grpcDir) && target !== allowed)
        .map((target) => `${rel(file)} → ${rel(target)}`),
    );
    expect(violations).toEqual([]);
  });

  it('the Gate stays split along its owners: no file in core/gate/ over 300 lines', () => {
    const long = sourceFiles(join(root, 'core', 'gate'))
      .map((file) => ({ file: rel(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 300);
    expect(long).toEqual([]);
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
      imports(file)
        .filter((target) => !inside(target, protoDir))
        .map((target) => `${rel(file)} → ${rel(target)}`),
    );
    expect(violations).toEqual([]);
  });

  it('the SDK imports only itself, the protocol package and its declared dependencies', () => {
    const sdkDir = join(root, 'sdk');
    const manifest = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const allowed = new Set(Object.keys(manifest.dependencies));
    expect(allowed).toContain('@model-gateway/protocol');
    const violations = sourceFiles(sdkDir)
      .filter((file) => !inside(file, join(sdkDir, 'dist')))
      .flatMap((file) => [
        ...imports(file)
          .filter((target) => !inside(target, sdkDir))
          .map((target) => `${rel(file)} → ${rel(target)}`),
        ...packageImports(file)
          .filter((name) => !name.startsWith('node:') && !allowed.has(name))
          .map((name) => `${rel(file)} → ${name}`),
      ]);
    expect(violations).toEqual([]);
  });

  it('core names no plugin: what it needs to know, each plugin declares (its plugin.json)', () => {
    const plugins = builtinPluginFolders();
    const violations = sourceFiles(join(root, 'core')).flatMap((file) =>
      stringLiterals(parse(file))
        .filter((literal) => !isEventName(literal))
        .flatMap((literal) =>
          plugins
            .filter((name) => literal.text === name || literal.text.includes(`'${name}'`))
            .map((name) => `${rel(file)}:${line(literal)} names '${name}'`),
        ),
    );
    expect(violations).toEqual([]);
  });

  it('every built-in plugin has a plugin.json saying whether it keeps state', () => {
    const missing = builtinPluginFolders().filter((name) => {
      try {
        return (
          typeof (JSON.parse(readFileSync(join(root, 'plugins', name, 'plugin.json'), 'utf8')) as { stateful?: unknown }).stateful !==
          'boolean'
        );
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  it('plugins admit through core: no plugin runs an admission stage (key, permission, rate, own account) itself', () => {
    // core/admission/http-middleware.ts runs the Pipeline's stages in one order for every route (the
    // adapters through admission.request); a route that called them by hand could skip or reorder one.
    const stage = /\bpipeline\s*\.\s*(authenticate|countRequest|requirePermission|checkOwnAccount)\s*\(/g;
    const files = [...sourceFiles(join(root, 'plugins')), ...sourceFiles(join(root, 'examples', 'custom-plugin'))];
    const violations = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(stage)].map((m) => `${rel(file)} calls pipeline.${m[1]}`),
    );
    expect(violations).toEqual([]);
  });

  it("core makes admission's checks in one place: only core/admission/pipeline.ts throws their codes", () => {
    const codes = [
      'API_KEY_MISSING',
      'API_KEY_INVALID',
      'ACCOUNT_BLOCKED',
      'TOKEN_PERMISSION_REQUIRED',
      'RATE_LIMIT_EXCEEDED',
      'ACCESS_TO_ANOTHER_ACCOUNT_DENIED',
      'ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED',
    ];
    const allowed = new Set([join(root, 'core', 'admission', 'pipeline.ts'), join(root, 'core', 'errors.ts')]);
    const violations = sourceFiles(join(root, 'core'))
      .filter((file) => !allowed.has(file))
      .flatMap((file) =>
        stringLiterals(parse(file))
          .filter((literal) => codes.includes(literal.text))
          .map((literal) => `${rel(file)}:${line(literal)} throws ${literal.text}`),
      );
    expect(violations).toEqual([]);
  });

  it('plugins keep no module-level state: no map keyed by a context, no module-level let or var', () => {
    // Per-gateway state lives in the plugin's instance (definePlugin({ create })): a module is shared
    // by every gateway in the process, so state there is shared by them too.
    const files = [...sourceFiles(join(root, 'plugins')), ...sourceFiles(join(root, 'examples', 'custom-plugin'))];
    const violations = files.flatMap((file) => moduleStateProblems(parse(file)).map((problem) => `${rel(file)}: ${problem}`));
    expect(violations).toEqual([]);
  });
});

/** Folders under plugins/ that are plugins (those starting with `_` hold shared helpers). */
function builtinPluginFolders(): string[] {
  const dir = join(root, 'plugins');
  return readdirSync(dir).filter((name) => !name.startsWith('_') && statSync(join(dir, name)).isDirectory());
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

const line = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;

/** Every string literal of a file (quoted or a template without substitutions, and each template's text parts); comments are not literals. */
function stringLiterals(source: ts.SourceFile): ts.LiteralLikeNode[] {
  const found: ts.LiteralLikeNode[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      found.push(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** An event name given to an emitter (`events.emit('usage', …)`): core's own event, which a plugin may share a word with. */
function isEventName(literal: ts.Node): boolean {
  const call = literal.parent;
  return (
    ts.isCallExpression(call) &&
    call.arguments[0] === literal &&
    ts.isPropertyAccessExpression(call.expression) &&
    ['emit', 'has', 'on', 'off', 'once'].includes(call.expression.name.text)
  );
}

const COLLECTIONS = new Set(['Map', 'WeakMap', 'Set', 'WeakSet']);
const CONTEXT_TYPE = /\b(?:Plugin)?Context\b/;

/** Module-level declarations that hold state across gateways. */
function moduleStateProblems(source: ts.SourceFile): string[] {
  const problems: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const mutable = (statement.declarationList.flags & ts.NodeFlags.BlockScoped) !== ts.NodeFlags.Const;
    for (const declaration of statement.declarationList.declarations) {
      const name = declaration.name.getText(source);
      if (mutable)
        problems.push(
          `line ${line(declaration)}: module-level ${statement.declarationList.getFirstToken(source)?.getText(source)} ${name}`,
        );
      const init = declaration.initializer;
      const keyTypes = [
        declaration.type?.getText(source),
        init && ts.isNewExpression(init) && ts.isIdentifier(init.expression) && COLLECTIONS.has(init.expression.text)
          ? (init.typeArguments?.[0]?.getText(source) ?? '(untyped)')
          : undefined,
      ];
      if (
        keyTypes.some(
          (text) =>
            text !== undefined && (CONTEXT_TYPE.test(text) || (text === '(untyped)' && /WeakMap|WeakSet/.test(init!.getText(source)))),
        )
      ) {
        problems.push(`line ${line(declaration)}: ${name} keeps state keyed by a context (put it in the plugin's instance)`);
      }
    }
  }
  return problems;
}
