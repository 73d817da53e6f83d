/** Types of scripts/process-alive.mjs for the TypeScript that imports it (tests). */
export function processAlive(pid: number): boolean;
