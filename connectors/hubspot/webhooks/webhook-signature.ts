import { createHmac, timingSafeEqual } from 'node:crypto';
import { HubSpotSignatureError } from '../errors.js';
import { HUBSPOT_WEBHOOK } from '../provider.js';

/**
 * HubSpot request signature v3: base64 HMAC-SHA256, keyed by the app's client secret, over
 * method + URI + raw body + timestamp, where the URI is the full URL HubSpot called with a fixed set of
 * percent-encodings decoded. The timestamp (ms) must lie within 5 minutes of now, either way.
 */

export interface HubSpotSignatureInput {
  method: string;
  /** The full public URL HubSpot called (`APP_URL` + original path + query). */
  url: string;
  rawBody: Buffer;
  timestampHeader: string | undefined;
  signatureHeader: string | undefined;
  clientSecret: string;
  /** Epoch ms; defaults to the clock. */
  now?: number;
}

const DECODE_IN_URI = new RegExp(HUBSPOT_WEBHOOK.decodedInUri.join('|'), 'gi');

/** The URI as HubSpot signs it: only the listed percent-encodings are decoded. */
export function hubspotSigningUri(url: string): string {
  return url.replace(DECODE_IN_URI, (m) => decodeURIComponent(m));
}

export function computeHubSpotSignatureV3(
  clientSecret: string,
  method: string,
  url: string,
  rawBody: Buffer | string,
  timestamp: string,
): string {
  return createHmac('sha256', clientSecret)
    .update(`${method.toUpperCase()}${hubspotSigningUri(url)}`)
    .update(rawBody)
    .update(timestamp)
    .digest('base64');
}

/** Throws `HubSpotSignatureError` (with a `reason`) unless the request carries a valid, fresh v3 signature. */
export function verifyHubSpotSignatureV3(input: HubSpotSignatureInput): void {
  const { signatureHeader, timestampHeader } = input;
  if (!signatureHeader)
    throw new HubSpotSignatureError('missing_signature', 'the X-HubSpot-Signature-v3 header is missing');
  if (!timestampHeader) {
    throw new HubSpotSignatureError('missing_timestamp', 'the X-HubSpot-Request-Timestamp header is missing');
  }
  if (!/^\d+$/.test(timestampHeader)) {
    throw new HubSpotSignatureError(
      'malformed_timestamp',
      'the request timestamp is not a number of milliseconds',
    );
  }
  const now = input.now ?? Date.now();
  const age = now - Number(timestampHeader);
  if (age > HUBSPOT_WEBHOOK.maxSkewMs) {
    throw new HubSpotSignatureError('timestamp_too_old', 'the request timestamp is more than 5 minutes old');
  }
  if (age < -HUBSPOT_WEBHOOK.maxSkewMs) {
    throw new HubSpotSignatureError(
      'timestamp_in_future',
      'the request timestamp is more than 5 minutes in the future',
    );
  }
  const expected = Buffer.from(
    computeHubSpotSignatureV3(input.clientSecret, input.method, input.url, input.rawBody, timestampHeader),
  );
  const given = Buffer.from(signatureHeader.trim());
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new HubSpotSignatureError(
      'signature_mismatch',
      'the X-HubSpot-Signature-v3 header does not match the request',
    );
  }
}

/** What the routes that HubSpot signs need to check a request: where the app is, the secret and the clock. */
export interface SignedRouteSettings {
  /** APP_URL: the URL HubSpot signed is the public one, not what the proxy in front of us forwarded. */
  publicUrl: string;
  clientSecret: string;
  now?: () => number;
}

/**
 * Checks an Express request read with `express.raw` as HubSpot signs it (v3); returns its raw body. Throws
 * HubSpotSignatureError. The webhook route and the app card's routes both call this.
 */
export function verifySignedRequest(
  req: { method: string; originalUrl: string; body: unknown; get(name: string): string | undefined },
  settings: SignedRouteSettings,
): Buffer {
  const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  verifyHubSpotSignatureV3({
    method: req.method,
    url: `${settings.publicUrl}${req.originalUrl}`,
    rawBody,
    timestampHeader: req.get(HUBSPOT_WEBHOOK.timestampHeader),
    signatureHeader: req.get(HUBSPOT_WEBHOOK.signatureHeader),
    clientSecret: settings.clientSecret,
    now: (settings.now ?? Date.now)(),
  });
  return rawBody;
}
