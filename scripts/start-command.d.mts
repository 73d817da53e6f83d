/** Types of scripts/start-command.mjs for the TypeScript that imports it (tests and the benchmark). */
export function startCommand(root?: string): { nodeFlags: string[]; entry: string };
