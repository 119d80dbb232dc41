/** A HubSpot `report_slug` change event on a company, as HubSpot signs and sends it to the webhook. */
export function hubspotSlugEvent(
  eventId: number,
  portalId: string,
  recordId: string,
  value: string,
): Record<string, unknown> {
  return {
    eventId,
    subscriptionId: 1,
    portalId: Number(portalId),
    appId: 1_234_567,
    occurredAt: Date.now(),
    subscriptionType: 'object.propertyChange',
    objectTypeId: '0-2',
    attemptNumber: 0,
    objectId: Number(recordId),
    propertyName: 'report_slug',
    propertyValue: value,
    changeSource: 'CRM_UI',
    sourceId: 'userId:4242',
  };
}
