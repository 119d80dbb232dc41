/**
 * A rolling-window request budget, like HubSpot's per-portal TEN_SECONDLY_ROLLING limit: at most `max`
 * requests in any `intervalMs`. Refused requests do not use up budget.
 */
export class RollingBudget {
  private stamps: number[] = [];

  constructor(
    public max: number,
    public intervalMs: number,
    private readonly now: () => number,
  ) {}

  /** Takes a slot if one is free; `remaining` is what is left after this request. */
  take(): { allowed: boolean; remaining: number } {
    const now = this.now();
    this.stamps = this.stamps.filter((t) => t > now - this.intervalMs);
    if (this.stamps.length >= this.max) return { allowed: false, remaining: 0 };
    this.stamps.push(now);
    return { allowed: true, remaining: this.max - this.stamps.length };
  }

  reset(): void {
    this.stamps = [];
  }
}
