/** A stream end's reason, as one of a few label values (the reason text itself is unbounded). */
export function disconnectKind(reason: string | undefined): string {
  if (!reason) return 'unknown';
  if (reason.startsWith('heartbeat')) return 'heartbeat_timeout';
  if (reason.startsWith('stream error')) return 'stream_error';
  if (reason.startsWith('stream cancelled')) return 'cancelled';
  if (reason.startsWith('stream ended')) return 'ended_by_service';
  if (reason.startsWith('gateway shutdown')) return 'gateway_shutdown';
  return 'other';
}
