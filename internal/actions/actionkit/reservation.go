package actionkit

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"

// NewReservationID returns a random RFC 4122 version 4 UUID
// (lockaction.NewReservationID).
func NewReservationID() string { return lockaction.NewReservationID() }
