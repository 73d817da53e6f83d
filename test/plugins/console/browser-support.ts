/**
 * The console's browser test kit: Debian's chromium (never a downloaded browser) driven by
 * puppeteer-core, axe-core for accessibility, CSP violations and page errors collected, screenshots
 * kept under test-artifacts/console/ (gitignored).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { repoRoot } from '../../support/python.js';
import type { Prerequisite } from '../../support/prerequisites.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(repoRoot, 'test-artifacts', 'console');

export function chromiumPrerequisite(): Prerequisite {
  return { available: existsSync(CHROMIUM), reason: `no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)` };
}

export async function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in CI containers has no user namespaces for chromium's sandbox; /dev/shm is small there.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--lang=en-US', '--window-size=1360,900'],
    defaultViewport: { width: 1360, height: 900 },
  });
}

/** What went wrong in the page: CSP violations, uncaught errors, console errors. */
export interface PageProblems {
  csp: string[];
  errors: string[];
}

/** A page that records CSP violations (from its first script on) and errors. */
export async function watchedPage(browser: Browser): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage();
  const problems: PageProblems = { csp: [], errors: [] };
  await page.exposeFunction('__reportCsp', (line: string) => problems.csp.push(line));
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __reportCsp: (l: string) => void }).__reportCsp(
        `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  page.on('pageerror', (err) => problems.errors.push(`pageerror: ${(err as Error).message}`));
  return { page, problems };
}

const axeSource = readFileSync(join(createRequire(import.meta.url).resolve('axe-core'), '..', 'axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern; the console's own scripts stay under it.
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: unknown) => Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  })) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) as `${string}.png`, fullPage: true });
}
