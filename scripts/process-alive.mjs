/**
 * Whether process `pid` is running: signal 0 checks without sending anything. EPERM means it runs
 * under another user. The one check the build lock, the bench gateways' store sweep and the tests use.
 */
export function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
