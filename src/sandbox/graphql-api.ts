import {
  buildSchema,
  type ExecutionResult,
  execute,
  GraphQLError,
  type GraphQLSchema,
  parse,
  validate,
} from 'graphql';
import { z } from 'zod';
import type { ApiKey } from './api-keys.js';
import type { PublicReport } from './fixtures.js';
import { SandboxHttpError } from './http-error.js';
import type { ReportStore } from './report-store.js';
import { checkLimit, checkQuery, type SearchCriteria, searchReports } from './search.js';

/**
 * The GraphQL endpoint, limited to what the interface names: `me { sandbox }` and `search(q, industry, limit)`
 * returning reports. A client that works here uses nothing the real service might lack.
 */

const SDL = /* GraphQL */ `
  type Query {
    me: Me!
    search(q: String, industry: String, limit: Int): [Report!]!
  }

  type Me {
    sandbox: Boolean!
  }

  type Report {
    slug: String!
    name: String!
    industry: String!
    stage: String!
    geography: String!
    description: String!
    score: Score!
    verification: Verification
    report_url: String!
  }

  type Score {
    overall: Float!
    band: String!
    pillars: [Pillar!]!
    strengths: [String!]!
    risks: [String!]!
    scored_at: String!
  }

  type Pillar {
    name: String!
    score: Float!
    weight: Float!
  }

  type Verification {
    verified_score: Float!
    verdict: String!
    signed_at: String!
  }
`;

export const sandboxSchema: GraphQLSchema = buildSchema(SDL);

const BAD_USER_INPUT = 'BAD_USER_INPUT';

export const graphqlRequestSchema = z.object({
  query: z.string().min(1),
  variables: z.record(z.string(), z.unknown()).nullish(),
  operationName: z.string().nullish(),
});

interface Context {
  key: ApiKey;
  store: ReportStore;
}

const searchArgsSchema = z.object({
  q: z.string().nullish(),
  industry: z.string().nullish(),
  limit: z.number().int().nullish(),
});

const rootValue = {
  me: (_args: unknown, context: Context) => ({ sandbox: context.key.sandbox }),
  search: (args: unknown, context: Context): PublicReport[] => {
    const parsed = searchArgsSchema.parse(args);
    try {
      const criteria: SearchCriteria = { limit: checkLimit(parsed.limit ?? undefined) };
      if (parsed.q != null) criteria.q = checkQuery(parsed.q);
      if (parsed.industry != null) criteria.industry = parsed.industry;
      return searchReports(context.store.published(), criteria).results;
    } catch (err) {
      if (err instanceof SandboxHttpError && err.status === 400) {
        throw new GraphQLError(err.message, { extensions: { code: BAD_USER_INPUT, reason: err.code } });
      }
      throw err;
    }
  },
};

export interface GraphqlAnswer {
  status: number;
  body: ExecutionResult;
}

/**
 * Runs one request. Requests that cannot run (bad body, syntax, validation, variables) and argument errors
 * (the `q` rule) answer 400, as the interface's error table asks for `q`; everything else 200.
 */
export async function runGraphql(body: unknown, context: Context): Promise<GraphqlAnswer> {
  const request = graphqlRequestSchema.safeParse(body);
  if (!request.success) {
    return {
      status: 400,
      body: { errors: [new GraphQLError('the body must be a JSON object with a "query" string')] },
    };
  }
  let document: ReturnType<typeof parse>;
  try {
    document = parse(request.data.query);
  } catch (err) {
    if (err instanceof GraphQLError) return { status: 400, body: { errors: [err] } };
    throw err;
  }
  const validationErrors = validate(sandboxSchema, document);
  if (validationErrors.length > 0) return { status: 400, body: { errors: validationErrors } };
  const result = await execute({
    schema: sandboxSchema,
    document,
    rootValue,
    contextValue: context,
    variableValues: request.data.variables ?? undefined,
    operationName: request.data.operationName ?? undefined,
  });
  const badInput = result.errors?.some((e) => e.extensions.code === BAD_USER_INPUT) ?? false;
  // No `data` at all means the request never ran (for example a variable of the wrong type).
  const notRun = !('data' in result) || result.data === undefined;
  return { status: badInput || notRun ? 400 : 200, body: result };
}
