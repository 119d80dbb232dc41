/** A test or the demo asked the local HubSpot for something impossible (an unknown company, a bad value). */
export class LocalHubSpotUsageError extends Error {
  readonly code = 'LOCAL_HUBSPOT_USAGE';
  constructor(message: string) {
    super(`local HubSpot: ${message}`);
    this.name = 'LocalHubSpotUsageError';
  }
}
