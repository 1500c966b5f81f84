SELECT count(*)
FROM inbox
WHERE received_at < @cutoff
  AND (source = ANY(@sources)) = @include
  AND status IN ('received', 'failed')
