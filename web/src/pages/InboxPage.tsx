export { InboxPage } from "../inbox/InboxPage";
