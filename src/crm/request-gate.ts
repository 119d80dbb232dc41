/**
 * Pacing for one upstream identity (a CRM installation, a report-service key), shared by every process
 * through Redis (see ../ratelimit/redis-gate.ts). Connectors call `acquire` before each request and `pause`
 * when the upstream says the window is spent, so a 429 slows that identity only.
 */
export interface RequestGate {
  /** Resolves when one more request may be sent. */
  acquire(): Promise<void>;
  /** Everyone sharing this identity holds off for `ms`. */
  pause(ms: number): Promise<void>;
}

/** For tests and one-off calls where nothing else shares the identity. */
export const OPEN_GATE: RequestGate = {
  acquire: async () => {},
  pause: async () => {},
};
