package rights

import "testing"

func TestCommand_ChangeGrammar(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		re         string // which command must match
		groups     []string
	}{
		{"rectify_colon", "correct 1a2b3c4d: I live in Paris now", "rectify", []string{"1a2b3c4d", "I live in Paris now"}},
		{"rectify_arrow", "Please correct Oak Street -> my address is 7 Elm Road", "rectify", []string{"Oak Street", "my address is 7 Elm Road"}},
		{"rectify_to_say", "rectify the memory about tea to say likes coffee", "rectify", []string{"about tea", "likes coffee"}},
		{"share_group", "share launch window with group dev-room.", "share", []string{"launch window", "dev-room"}},
		{"promote_group", "promote 1a2b3c4d to group ops", "share", []string{"1a2b3c4d", "ops"}},
		{"make_public", "make 1a2b3c4d public", "public", []string{"1a2b3c4d"}},
		{"promote_public", "promote the memory dawn launch to public!", "public", []string{"dawn launch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := map[string][]string{
				"rectify": rectifyCmd.FindStringSubmatch(tc.text),
				"share":   shareCmd.FindStringSubmatch(tc.text),
				"public":  publicCmd.FindStringSubmatch(tc.text),
			}
			got := res[tc.re]
			if got == nil {
				t.Fatalf("%q is not a %s command", tc.text, tc.re)
			}
			for i, want := range tc.groups {
				if got[i+1] != want {
					t.Fatalf("%q: part %d = %q, want %q", tc.text, i+1, got[i+1], want)
				}
			}
		})
	}
	// plain chat is none of them
	for _, text := range []string{"I corrected the essay", "share your thoughts", "make it so"} {
		if rectifyCmd.MatchString(text) || shareCmd.MatchString(text) || publicCmd.MatchString(text) {
			t.Fatalf("%q taken for a command", text)
		}
	}
}

func TestPick_ResolvesOneMemory(t *testing.T) {
	ms := []held{
		heldText("aaaa1111bbbb", "my address is 12 Oak Street"),
		heldText("cccc2222dddd", "likes green tea"),
		heldText("eeee3333ffff", "likes black tea"),
	}
	for _, tc := range []struct{ ref, want, err string }{
		{"aaaa1111", "aaaa1111bbbb", ""},
		{"Oak Street", "aaaa1111bbbb", ""},
		{"green tea", "cccc2222dddd", ""},
		{"tea", "", "invalid: 2 memories match"},
		{"coffee", "", "invalid: none of your"},
	} {
		got, err := pick(ms, tc.ref)
		if tc.err != "" {
			if err == nil || !startsWith(err.Error(), tc.err) {
				t.Fatalf("pick(%q): err %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || got.evt.ID != tc.want {
			t.Fatalf("pick(%q) = %v, %v; want %s", tc.ref, got.evt, err, tc.want)
		}
	}
}
