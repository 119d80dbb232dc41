import { nameToQuery } from '../reports/query.js';
import { stripLegalForms } from './normalize.js';
import type { MatchCompany } from './schemas.js';

/**
 * The `q` to search the report service with for a company: its name without legal forms ("Acme Robotics
 * GmbH" -> "Acme Robotics"), made acceptable to the service by nameToQuery. Null when nothing of the name
 * itself survives as ASCII letters or digits: an empty name, punctuation only, or a script that folds to
 * nothing. Searching the legal form alone ("株式会社トヨタ Co., Ltd." -> "Co Ltd") would return noise, and an
 * empty `q` would return everything.
 */
export function searchQueryFor(company: Pick<MatchCompany, 'name'>): string | null {
  const query = nameToQuery(stripLegalForms(company.name ?? ''));
  return query === '' ? null : query;
}
