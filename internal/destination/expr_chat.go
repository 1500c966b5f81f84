package destination

import (
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// Chat platforms read markup in a message's text: a destination's answer
// or an issue's title quoted into one could mention a whole channel or
// show a phishing link under hookinbox's name. Each escape makes a string
// show as the characters it is on one platform; the built-in alert
// formats use them, and operators' chat transforms can.
var (
	// slackEscaper is Slack's own list: "&", "<" and ">" are the only
	// characters mrkdwn reads as control (links, <!channel> mentions).
	slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	// discordEscaper backslash-escapes what Discord's markdown reads:
	// emphasis, code, quotes, headings, lists, masked links
	// [text](url), <@id> mentions and @everyone. A message also carries
	// "allowed_mentions": {"parse": []}, so no mention pings.
	discordEscaper = backslashEscaper(`\*_~` + "`" + `|>#-[]()<@`)
	// teamsEscaper escapes what Teams' message text reads: its markdown
	// by backslash and its HTML by entity.
	teamsEscaper = strings.NewReplacer(append(backslashPairs(`\*_~`+"`"+`#-[]()|`),
		"&", "&amp;", "<", "&lt;", ">", "&gt;")...)
)

func backslashPairs(chars string) []string {
	var pairs []string
	for _, c := range chars {
		pairs = append(pairs, string(c), `\`+string(c))
	}
	return pairs
}

func backslashEscaper(chars string) *strings.Replacer {
	return strings.NewReplacer(backslashPairs(chars)...)
}

// chatEscapes are the CEL functions slackEscape, discordEscape and
// teamsEscape. Each costs its string's length twice, scanned and built,
// as the strings extension's transforms do.
func chatEscapes() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, f := range []struct {
		name, overload string
		r              *strings.Replacer
	}{
		{"slackEscape", "slack_escape_string", slackEscaper},
		{"discordEscape", "discord_escape_string", discordEscaper},
		{"teamsEscape", "teams_escape_string", teamsEscaper},
	} {
		r := f.r
		opts = append(opts,
			cel.Function(f.name, cel.Overload(f.overload, []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return types.String(r.Replace(string(v.(types.String)))) }))),
			cel.CostModel(cost.Overload(f.overload,
				cost.EvalCost(cost.Sum(cost.Const(cost.CallCost), cost.StringScan(cost.Length(cost.Arg(0))), cost.Length(cost.Result()))))))
	}
	return opts
}
