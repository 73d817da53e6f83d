/**
 * The docs' examples as tests. The convention (README "Testing"):
 *
 *   ```sh | ```ts | ```python       run against a started demo, in file order
 *   ```text | ```yaml | ```json …    never run
 *
 * and markers after the language: `no-run` (shown only: starting the gateway, the test suite),
 * `needs=a,b` (tools CI installs: skipped with a line without them, a failure under CI=true),
 * `optional=a,b` (tools CI does not install: skipped with a line when missing),
 * `expect-error` (curl may get an HTTP error answer), `file=NAME` (not run: saved as NAME in the
 * examples' folder, for the next examples to use, as the text tells the reader to save it).
 *
 * A ```text block that follows a ```sh example with nothing but blank lines between them is that
 * example's output: what the example prints must match it, up to IDs, timestamps, ports, line breaks
 * and the `…` elisions the reader sees (`outputMatches`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export type ExampleLanguage = 'sh' | 'ts' | 'python';

export interface DocExample {
  /** Path relative to the repository root, e.g. `docs/fitting.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: ExampleLanguage;
  code: string;
  noRun: boolean;
  needs: string[];
  optional: string[];
  expectError: boolean;
  /** `file=NAME`: saved under this name instead of being run. */
  saveAs: string | undefined;
  /** The ```text block right after a ```sh example: what it prints (see `outputMatches`). */
  output?: { line: number; text: string };
}

const LANGUAGES: Record<string, ExampleLanguage> = {
  sh: 'sh',
  bash: 'sh',
  shell: 'sh',
  ts: 'ts',
  typescript: 'ts',
  python: 'python',
  py: 'python',
};

/** The Markdown files whose examples are run: README.md and everything under docs/. */
export function docFiles(root: string): string[] {
  const files = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  try {
    walk('docs');
  } catch {
    // no docs/ folder: only the README
  }
  return files;
}

/** Every fenced block of a Markdown text, with its info string and first line. */
export function fencedBlocks(text: string): { info: string; line: number; code: string }[] {
  const blocks: { info: string; line: number; code: string }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++) body.push(lines[j]!.slice(indent!.length));
    blocks.push({ info: info!.trim(), line: i + 1, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The runnable examples of one Markdown file (path relative to root). */
export function extractExamples(root: string, file: string): DocExample[] {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  const examples: DocExample[] = [];
  const blocks = fencedBlocks(text);
  for (const [index, block] of blocks.entries()) {
    const [lang = '', ...words] = block.info.split(/\s+/);
    const list = (key: string) =>
      words
        .filter((w) => w.startsWith(`${key}=`))
        .flatMap((w) =>
          w
            .slice(key.length + 1)
            .split(',')
            .filter(Boolean),
        );
    // Any block with file=NAME (a YAML config, a service) is saved for the next examples.
    const language = LANGUAGES[lang.toLowerCase()] ?? (list('file').length ? 'sh' : undefined);
    if (!language) continue;
    examples.push({
      file: relative(root, join(root, file)),
      line: block.line,
      language,
      code: block.code,
      noRun: words.includes('no-run'),
      needs: list('needs'),
      optional: list('optional'),
      expectError: words.includes('expect-error'),
      saveAs: list('file')[0],
      output: language === 'sh' ? outputBlock(block, blocks[index + 1], lines) : undefined,
    });
  }
  return examples;
}

type Block = ReturnType<typeof fencedBlocks>[number];

/** The ```text block right after `block`, with only blank lines between the two fences. */
function outputBlock(block: Block, next: Block | undefined, lines: string[]): DocExample['output'] {
  if (!next || next.info.split(/\s+/)[0] !== 'text') return undefined;
  const closing = block.line + block.code.split('\n').length; // 0-based index of the closing fence
  const between = lines.slice(closing + 1, next.line - 1);
  return between.every((line) => line.trim() === '') ? { line: next.line, text: next.code } : undefined;
}

/**
 * What varies from run to run, the same in the docs and in a run: IDs (UUIDs, long hex), epoch
 * seconds and milliseconds, ISO times. Whitespace is dropped, because the docs wrap long JSON lines.
 */
function normalized(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/([_-])[0-9a-f]{16,}\b/gi, '$1<id>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, '<time>')
    .replace(/\b1\d{12}\b/g, '<ms>')
    .replace(/\b1\d{9}\b/g, '<s>')
    .replace(/\s+/g, '');
}

/**
 * Whether an example printed what its ```text block shows. Both are normalized (IDs, timestamps,
 * whitespace); an `…` in the docs stands for anything (with the hex digits of an ID it cuts short,
 * as in `"taskId":"6192f0e6-…"`; between commas, for no member too), and the rest must match all
 * of the output, in order.
 */
export function outputMatches(expected: string, actual: string): boolean {
  // split() with the two groups: literal, comma before the elision, comma after it, literal, …
  const pieces = normalized(expected).split(/(,?)[0-9a-f-]*…(,?)/i);
  let pattern = '';
  for (let i = 0; i < pieces.length; i += 3) {
    pattern += pieces[i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (i + 1 >= pieces.length) break;
    const [before, after] = [pieces[i + 1], pieces[i + 2]];
    // `,…` may stand for no member at all (`"a":1,…}` matches `"a":1}`), and so may `…,` and `,…,`.
    pattern += before ? (after ? '(?:,.*?)?,' : '(?:,.*?)?') : after ? '(?:.*?,)?' : '.*?';
  }
  return new RegExp(`^${pattern}$`, 's').test(normalized(actual));
}

/** What an example printed, with the test's ports put back to the docs' 8080 and 9090. */
export function withDocsPorts(output: string, httpPort: number, grpcPort: number): string {
  return output
    .replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${httpPort}\\b`, 'g'), '$1:8080')
    .replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${grpcPort}\\b`, 'g'), '$1:9090');
}

/**
 * The Python modules an example imports (`import a, b`, `from a.b import c`) or runs (`python -m a`),
 * top-level names only, without the stubs examples generate themselves (`gate_pb2`, `gate_pb2_grpc`).
 */
export function pythonModules(example: DocExample): string[] {
  if (example.language !== 'python' && !/\bpython3?\b/.test(example.code)) return [];
  const found = new Set<string>();
  for (const match of example.code.matchAll(/^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w., ]+))/gm)) {
    for (const name of (match[1] ?? match[2]!).split(',')) found.add(name.trim().split('.')[0]!);
  }
  for (const match of example.code.matchAll(/\bpython3?\s+-m\s+([\w.]+)/g)) found.add(match[1]!.split('.')[0]!);
  return [...found].filter((name) => name && !/_pb2(_grpc)?$/.test(name)).sort();
}

/**
 * The docs name the demo's default ports; the test's demo listens on free ones. Only these two
 * literal addresses change, so what runs is otherwise the example as written.
 */
export function withPorts(code: string, httpPort: number, grpcPort: number): string {
  return code.replace(/(127\.0\.0\.1|localhost):8080\b/g, `$1:${httpPort}`).replace(/(127\.0\.0\.1|localhost):9090\b/g, `$1:${grpcPort}`);
}

/**
 * The shell script of one sh example: variables set by earlier examples of the same file are read
 * from `stateFile` and those this one sets are written back, so a walk-through's IDs carry over from
 * block to block. curl fails on an HTTP error answer unless the example expects one.
 */
export function shellScript(example: DocExample, code: string, stateFile: string): string {
  const q = JSON.stringify(stateFile);
  return [
    '__base="$(compgen -v)"',
    `[ -f ${q} ] && source ${q}`,
    `trap 'declare -p $(compgen -v | grep -vxF "$__base" | grep -v "^__") > ${q} 2>/dev/null || true' EXIT`,
    example.expectError ? '' : 'curl() { command curl --fail-with-body "$@"; }',
    'set -eo pipefail',
    code,
  ].join('\n');
}
