"""What the background workers share (:mod:`service.workers.slot_worker`)."""
