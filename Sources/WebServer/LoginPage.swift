/// The login form shown on a non-loopback address before anything else.
enum LoginPage {
    static func render(problem: String? = nil, section: String = "web", title: String = "workoutd") -> String {
        var html = PageLayout.head(title: "\(title) — log in", script: false)
        html += #"<main class="login"><h1>\#(HTMLText.escaped(title))</h1>"#
        if let problem { html += #"<p class="notice bad" id="login-problem">\#(HTMLText.escaped(problem))</p>"# }
        html += #"""
            <form method="post" action="/login"><label>Token <input type="password" name="token" id="token" autocomplete="current-password" required autofocus></label>
            <button type="submit" id="login">Log in</button></form>
            <p class="meta">The token is in the file the credential <code>\#(section).token_credential</code> names (LoadCredential=), or in <code>\#(section).token_file</code>.</p></main>
            """#
        return html + PageLayout.tail
    }
}
