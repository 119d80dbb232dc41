/** The CRM refused the link an admin chose on the review queue (the record kept what it had). */
export class ReviewWriteError extends Error {
  readonly code = 'REVIEW_WRITE_FAILED';
  constructor(
    message: string,
    readonly recordErrorCode: string,
  ) {
    super(`the CRM refused the link: ${message}`);
    this.name = 'ReviewWriteError';
  }
}
