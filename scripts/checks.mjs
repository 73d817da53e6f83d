/**
 * `npm test`'s first step: `npm run typecheck`, `npm run lint` and `npm run format:check` at once. Each
 * is one process on about one core (tsc about 25 s, ESLint about 20 s, Prettier about 15 s on a 2-core
 * machine), so one after the other left a core idle for the whole first step. Each one's output is printed whole when it ends, so the two never
 * interleave; the step fails when either fails.
 */
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check'];

function run(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (text) => (output += text));
    }
    child.on('error', (err) => (output += `${err.message}\n`));
    child.on('close', (code) => {
      process.stdout.write(`> npm run ${script}: ${code === 0 ? 'ok' : `failed (exit ${code})`}\n${output}`);
      resolve(code === 0);
    });
  });
}

const passed = await Promise.all(CHECKS.map(run));
process.exitCode = passed.every(Boolean) ? 0 : 1;
