import { z } from 'zod';

/**
 * Shapes of HubSpot's response bodies, as far as the connector reads them. Objects are loose: HubSpot adds
 * fields over time and an unknown field must never fail a sync.
 */

/** HubSpot sends property values as strings; a missing value is null or absent. */
const propertyValues = z.record(z.string(), z.string().nullable().optional());

export const hubspotObjectSchema = z.looseObject({
  id: z.string(),
  properties: propertyValues.default({}),
  archived: z.boolean().optional(),
});
export type HubSpotObject = z.infer<typeof hubspotObjectSchema>;

export const pagingSchema = z
  .looseObject({
    next: z.looseObject({ after: z.string() }).optional(),
  })
  .optional();

export const objectPageSchema = z.looseObject({
  results: z.array(hubspotObjectSchema),
  paging: pagingSchema,
});

export const searchPageSchema = z.looseObject({
  total: z.number().optional(),
  results: z.array(hubspotObjectSchema),
  paging: pagingSchema,
});

/** The error shape HubSpot uses across the CRM APIs (and inside 207 `errors`). */
export const hubspotErrorSchema = z.looseObject({
  status: z.string().optional(),
  message: z.string().optional(),
  category: z.string().optional(),
  subCategory: z.string().optional(),
  correlationId: z.string().optional(),
  context: z.record(z.string(), z.array(z.string())).optional(),
  errors: z
    .array(
      z.looseObject({
        message: z.string().optional(),
        code: z.string().optional(),
        context: z.record(z.string(), z.array(z.string())).optional(),
      }),
    )
    .optional(),
  /** 429 bodies. */
  policyName: z.string().optional(),
  errorType: z.string().optional(),
});
export type HubSpotErrorBody = z.infer<typeof hubspotErrorSchema>;

export const batchResponseSchema = z.looseObject({
  status: z.string().optional(),
  results: z.array(hubspotObjectSchema).default([]),
  errors: z.array(hubspotErrorSchema).default([]),
  numErrors: z.number().optional(),
});
export type HubSpotBatchResponse = z.infer<typeof batchResponseSchema>;

export const propertyOptionSchema = z.looseObject({
  label: z.string(),
  value: z.string(),
  displayOrder: z.number().optional(),
  hidden: z.boolean().optional(),
});

export const propertySchema = z.looseObject({
  name: z.string(),
  label: z.string().optional(),
  type: z.string(),
  fieldType: z.string(),
  groupName: z.string().optional(),
  options: z.array(propertyOptionSchema).default([]),
});
export type HubSpotProperty = z.infer<typeof propertySchema>;

export const accountDetailsSchema = z.looseObject({
  portalId: z.union([z.number(), z.string()]).transform(String),
  /** IANA name (`US/Eastern`); daily API limits reset at midnight there. */
  timeZone: z.string().optional(),
  /** `STANDARD` for a production account; developer test accounts and sandboxes say otherwise. */
  accountType: z.string().optional(),
});

/** Best effort: a body that is not a HubSpot error still yields an (empty) error object. */
export function parseHubSpotError(body: unknown): HubSpotErrorBody {
  const parsed = hubspotErrorSchema.safeParse(body);
  return parsed.success ? parsed.data : {};
}

/** `GET /crm/associations/{version}/notes/companies/labels` (AssociationSpecWithLabel, 2026-03 spec). */
export const associationLabelsSchema = z.looseObject({
  results: z.array(
    z.looseObject({
      category: z.string(),
      typeId: z.number().int(),
      label: z.string().nullish(),
    }),
  ),
});
