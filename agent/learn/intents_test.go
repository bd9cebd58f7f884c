package learn

import "testing"

func TestParseIntent_Cases(t *testing.T) {
	cases := []struct {
		name, in string
		kind     intentKind
		text     string
	}{
		{"remember that", "remember that Bob's birthday is May 4.", intentRemember, "Bob's birthday is May 4"},
		{"remember colon", "Remember: deploys happen on Fridays", intentRemember, "deploys happen on Fridays"},
		{"addressed", "@Snowclaw remember that the demo is at 3pm", intentRemember, "the demo is at 3pm"},
		{"addressed comma", "snowclaw, please remember I like tea", intentRemember, "I like tea"},
		{"chinese", "记住：我喜欢喝茶", intentRemember, "我喜欢喝茶"},
		{"chinese please", "请记住我住在上海。", intentRemember, "我住在上海"},
		{"forget about", "forget about my old address", intentForget, "my old address"},
		{"forget chinese", "忘记我的地址", intentForget, "我的地址"},
		{"correction", "No, that's wrong, the meeting is on Tuesday", intentCorrection, "No, that's wrong, the meeting is on Tuesday"},
		{"correction chinese", "不对，是周二", intentCorrection, "不对，是周二"},
		{"plain chat", "I remember when we shipped v1", intentNone, ""},
		{"empty remember", "remember:", intentNone, ""},
		{"someone else addressed", "Alice, remember that thing?", intentNone, ""},
		{"question", "what do you remember about me?", intentNone, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseIntent(tc.in, "Snowclaw")
			if got.kind != tc.kind || got.text != tc.text {
				t.Fatalf("parseIntent(%q) = %v %q, want %v %q", tc.in, got.kind, got.text, tc.kind, tc.text)
			}
		})
	}
}
