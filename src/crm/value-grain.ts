/**
 * How finely a CRM keeps the connector's values, so a value read back compares equal to the one written:
 * numbers to `decimals` places, instants to whole `instantMs` (1000: the CRM keeps whole seconds, so a report
 * time with milliseconds would otherwise never read back equal and every sync would rewrite it).
 */
export interface ValueGrain {
  decimals: number;
  instantMs: number;
}
