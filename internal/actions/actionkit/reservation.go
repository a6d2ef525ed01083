package actionkit

import "github.com/google/uuid"

// NewReservationID returns a random RFC 4122 version 4 UUID, the
// reservation ID format of the reference (crypto.randomUUID): the one UUID
// generator of the actions (acquire and release quarantines, recover).
func NewReservationID() string { return uuid.NewString() }
