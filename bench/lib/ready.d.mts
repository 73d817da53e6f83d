/** For bench servers: report readiness to the parent and answer `mem` requests (bench/lib/ready.mjs). */
export declare function reportReady(info: Record<string, unknown>): void;
