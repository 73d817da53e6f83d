/** Types of scripts/build-console.mjs for the TypeScript that imports it (the console's tests). */
export function buildConsole(outDir: string): Promise<void>;
