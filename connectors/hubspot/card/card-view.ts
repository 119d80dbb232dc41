import type { RecordCardSource } from '../../../src/crm/record-card.js';
import { topTied } from '../../../src/storage/review-ties.js';
import type { CardData } from './ui/card-data.js';
import { cardDataFromFields, parsePillars, safeReportUrl } from './ui/card-record.js';

/**
 * A company's card data as the connector reads it (its sign-in page): the record's own properties, as the
 * card reads them through HubSpot (ui/card-record.ts), with its review candidates and its report request.
 */

export { parsePillars, safeReportUrl };

export function cardDataOf({ record, review, request }: RecordCardSource): CardData {
  const data = cardDataFromFields(record.id, record.fields);
  return {
    ...data,
    review:
      data.status === 'needs_review' && review
        ? {
            candidates: review.candidates.map((c) => ({
              slug: c.slug,
              name: c.name,
              place: c.geography ?? null,
              industry: c.industry ?? null,
              score: c.score ?? null,
              // Items kept before reasons were kept have none; the card then shows none.
              ...(c.why ? { why: c.why } : {}),
            })),
            tied: topTied(review),
          }
        : null,
    request: request ? { state: request.state, requestedAt: request.requestedAt } : null,
  };
}
