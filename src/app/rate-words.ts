const numbers = new Intl.NumberFormat('en');

/**
 * A report key's requests a minute as people read them, the one formatting the admin page and `status` share
 * (so both write 6,000 and round alike): whole numbers with
 * thousands separators from ten up, one decimal below.
 */
export function perMinute(n: number): string {
  return n >= 10 ? numbers.format(Math.round(n)) : n.toFixed(1);
}
