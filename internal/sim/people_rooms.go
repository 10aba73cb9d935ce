package sim

import (
	"context"

	"foundry/internal/room"
	"foundry/internal/service"
)

// ApproveProposal is "Approve and create" in Needs your approval.
func (p *Person) ApproveProposal(ctx context.Context, proposalID string) error {
	_, err := p.Svc.DecideProposal(ctx, p.as(), proposalID, true)
	return err
}

// DeclineProposal is "Decline".
func (p *Person) DeclineProposal(ctx context.Context, proposalID string) error {
	_, err := p.Svc.DecideProposal(ctx, p.as(), proposalID, false)
	return err
}

// ListProposals is the reviewer's inbox of a Room (status "" = all).
func (p *Person) ListProposals(ctx context.Context, roomID, status string) ([]room.Proposal, error) {
	ps, err := p.Svc.ListProposals(ctx, p.as(), service.ListProposalsArgs{RoomID: roomID, Status: status})
	out := make([]room.Proposal, 0, len(ps))
	for _, x := range ps {
		out = append(out, x.Proposal)
	}
	return out, err
}
