package sim

import (
	"context"

	"foundry/internal/room"
)

// ApproveProposal is "Approve and create" in Needs your approval.
func (p *Person) ApproveProposal(ctx context.Context, proposalID string) error {
	return p.Svc.ApproveProposal(ctx, p.ws(), p.user(), proposalID)
}

// DeclineProposal is "Decline".
func (p *Person) DeclineProposal(ctx context.Context, proposalID string) error {
	return p.Svc.DeclineProposal(ctx, p.ws(), p.user(), proposalID)
}

// ListProposals is the reviewer's inbox of a Room (status "" = all).
func (p *Person) ListProposals(ctx context.Context, roomID, status string) ([]room.Proposal, error) {
	return p.Svc.ListProposals(ctx, p.ws(), roomID, status)
}
