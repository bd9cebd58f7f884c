package rights

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// maxDMExport bounds the export sent back in a private message (NIP-17
// rumors are limited); a bigger one is pointed at the HTTP API.
const maxDMExport = 30_000

var (
	exportCmd  = regexp.MustCompile(`(?i)^(?:please\s+)?export\s+(?:all\s+)?(?:of\s+)?my\s+data\b|^(?:导出我的数据)`)
	destroyCmd = regexp.MustCompile(`(?i)^(?:please\s+)?(?:delete|erase|destroy)\s+everything\s+(?:you\s+know\s+)?about\s+me\b|^(?:删除关于我的一切)`)
	confirmCmd = regexp.MustCompile(`(?i)^confirm\s+([0-9a-f]{8,64})\s*$`)
	freezeCmd  = regexp.MustCompile(`(?i)^(?:please\s+)?(freeze|unfreeze)\s+my\s+(?:memory|data)\b`)
	forgetCmd  = regexp.MustCompile(`(?is)^(?:please\s+)?forget\s+(.+)$`)
	// "correct 1a2b3c4d: I live in Paris now", "correct Berlin -> I live in Paris"
	rectifyCmd = regexp.MustCompile(`(?is)^(?:please\s+)?(?:correct|rectify)\s+(?:the\s+)?(?:memory\s+)?(.+?)\s*(?::|->|=>|\s+to\s+say\s+)\s*(.+)$`)
	// "share 1a2b3c4d with group dev", "promote 1a2b3c4d to group dev"
	shareCmd = regexp.MustCompile(`(?is)^(?:please\s+)?(?:share|promote)\s+(?:the\s+)?(?:memory\s+)?(.+?)\s+(?:with|to|in)\s+(?:the\s+)?group\s+(\S+?)[.!]?\s*$`)
	// "make 1a2b3c4d public", "promote 1a2b3c4d to public"
	publicCmd = regexp.MustCompile(`(?is)^(?:please\s+)?(?:make|promote)\s+(?:the\s+)?(?:memory\s+)?(.+?)\s+(?:to\s+)?public[.!]?\s*$`)
	// "forget what you know about my address" → "address"
	forgetFiller = regexp.MustCompile(`(?i)^(?:(?:what|everything)\s+you\s+know\s+about\s+|about\s+|that\s+)?(?:my\s+)?`)
)

// Command handles a rights request a person sent the agent in private
// (agent.Options.Commands). It answers in words; it is not a command
// when handled is false.
func (s *Service) Command(ctx context.Context, from, text string) (reply string, handled bool) {
	r := Request{Actor: from, Via: "dm", Subject: from}
	text = strings.TrimSpace(text)
	switch {
	case exportCmd.MatchString(text):
		return s.dmExport(ctx, r), true
	case destroyCmd.MatchString(text):
		res, err := s.Destroy(ctx, r, "")
		if err != nil {
			return s.refusal(err), true
		}
		return res.Message + fmt.Sprintf(` — reply "confirm %s" within 10 minutes.`, res.Token), true
	case confirmCmd.MatchString(text):
		return s.dmConfirm(ctx, r, confirmCmd.FindStringSubmatch(text)[1]), true
	case freezeCmd.MatchString(text):
		on := strings.EqualFold(freezeCmd.FindStringSubmatch(text)[1], "freeze")
		if err := s.Freeze(ctx, r, on); err != nil {
			return s.refusal(err), true
		}
		if on {
			return "Frozen: I will remember nothing new about you until you say \"unfreeze my memory\". What I know stays readable to you.", true
		}
		return "Unfrozen: I may remember new things about you again.", true
	case rectifyCmd.MatchString(text):
		m := rectifyCmd.FindStringSubmatch(text)
		return s.answer(s.Rectify(ctx, r, m[1], m[2])), true
	case shareCmd.MatchString(text):
		m := shareCmd.FindStringSubmatch(text)
		return s.answer(s.Promote(ctx, r, m[1], snowclaw.TierGroup, m[2])), true
	case publicCmd.MatchString(text):
		return s.answer(s.Promote(ctx, r, publicCmd.FindStringSubmatch(text)[1], snowclaw.TierPublic, "")), true
	case forgetCmd.MatchString(text):
		arg := forgetCmd.FindStringSubmatch(text)[1]
		sel, err := ParseSelector(strings.TrimSpace(forgetFiller.ReplaceAllString(arg, "")))
		if err != nil {
			return "invalid: " + err.Error(), true
		}
		res, err := s.Forget(ctx, r, sel, "")
		if err != nil {
			return s.refusal(err), true
		}
		return describe(res), true
	}
	return "", false
}

// dmConfirm takes a token for whichever operation is pending.
func (s *Service) dmConfirm(ctx context.Context, r Request, token string) string {
	if res, err := s.Destroy(ctx, r, token); err == nil {
		return res.Message
	}
	res, err := s.Forget(ctx, r, Selector{Query: "confirmed"}, token)
	if err != nil {
		return "invalid: that token is not pending for you (or it expired); ask again"
	}
	return describe(res)
}

// refusal is the reply to a request that failed: the error's client text
// (snowclaw.Text: a store failure is one retryable sentence, its words
// logged here, once, where the person is answered).
func (s *Service) refusal(err error) string {
	if _, ok := errors.AsType[*snowclaw.StoreError](err); ok {
		s.log.Error("the event store failed; the person is told to try again", "err", err)
	}
	return snowclaw.Text(err)
}

// answer words the outcome of a rectify or promotion.
func (s *Service) answer(c Change, err error) string {
	if err != nil {
		return s.refusal(err)
	}
	return c.Message + "."
}

func describe(res Result) string {
	if !res.Preview {
		return res.Message + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", res.Message)
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "- %s (%s)\n", m.Text, m.ID[:8])
	}
	fmt.Fprintf(&b, "Reply \"confirm %s\" within 10 minutes to forget them.", res.Token)
	return b.String()
}

func (s *Service) dmExport(ctx context.Context, r Request) string {
	x, err := s.Export(ctx, r)
	if err != nil {
		return s.refusal(err)
	}
	md := x.Markdown()
	if len(md) > maxDMExport {
		return fmt.Sprintf("Your export has %d records, too many for a message: fetch it with GET /api/v1/export (NIP-98, your key).", x.RecordCount)
	}
	return md
}
