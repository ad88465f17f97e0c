/**
 * Whether a process exists: signal 0 reaches it, or it exists under another user (EPERM). Used to tell a
 * run or worker directory whose owner is gone (safe to remove) from one still in use.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
