-- Retention: notifications that are over (delivered or discarded: nothing more will be tried)
-- are pruned once older than the retention, and then the events no notification refers to.
CREATE INDEX notifications_over ON notifications (created) WHERE next_attempt IS NULL;
CREATE INDEX notifications_event ON notifications (event_seq);
CREATE INDEX events_created ON events (created);
