import LOCALE from '@salesforce/i18n/locale';
import TIME_ZONE from '@salesforce/i18n/timeZone';
import { REPORT_FIELDS } from 'c/reportFields';
import { getRecord } from 'lightning/uiRecordApi';
import { api, LightningElement, wire } from 'lwc';
import { reportView } from './reportScoreView';

/**
 * The report score on an Account record page. It reads the connector's Report_* fields (as `c/reportFields`
 * names them) through Lightning Data Service (no Apex, no callout), so a seller sees exactly what their field
 * access allows. It has no action and no link to the connector's admin page (the operator's, which sellers
 * cannot open): where a decision waits it says that the admin takes it.
 */
export default class ReportScore extends LightningElement {
  /** The Account's id, set by the record page. */
  @api recordId;
  /** The connector's address (APP_URL), set in Lightning App Builder; kept so pages that set it still load. */
  @api connectorUrl;
  /** The connector's installation for this org, set in Lightning App Builder; kept so pages that set it still load. */
  @api installationId;

  record;
  error;

  @wire(getRecord, { recordId: '$recordId', optionalFields: REPORT_FIELDS })
  wiredRecord({ data, error }) {
    this.record = data;
    this.error = error;
  }

  get view() {
    return reportView(this.record, this.error, {
      locale: LOCALE,
      timeZone: TIME_ZONE,
    });
  }
}
