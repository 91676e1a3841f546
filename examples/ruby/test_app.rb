# frozen_string_literal: true

require "minitest/autorun"
require "net/http"
require "redis"

# The example app (app.rb) in a process of its own, driven over HTTP on loopback against
# GOBLIN_TEST_SERVER.
class ExampleAppTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)

  def setup
    host, port = ENV.fetch("GOBLIN_TEST_SERVER").split(":")
    @redis = Redis.new(host:, port: Integer(port))
    @redis.flushdb
    env = { "REDIS_URL" => "redis://#{host}:#{port}", "PORT" => "0" }
    @out, writer = IO.pipe
    @pid = spawn(env, RbConfig.ruby, "-I", File.join(ROOT, "ruby/lib"), File.join(__dir__, "app.rb"), out: writer)
    writer.close
    line = @out.gets or flunk("the app exited before it listened")
    @http = Net::HTTP.start("127.0.0.1", Integer(line[/:(\d+)$/, 1]))
  end

  def teardown
    @http&.finish
    Process.kill("TERM", @pid)
    Process.wait(@pid)
    @out.close
    @redis.close
  end

  def test_the_app_over_http
    logins = Array.new(4) { @http.post("/login", "user=ann").code }
    assert_equal %w[200 200 200 429], logins, "3 logins a minute per IP"

    api = Array.new(6) { @http.get("/api") }
    assert_equal %w[200 200 200 200 200 429], api.map(&:code), "a burst of 5, then 1 every 2 s"
    assert_equal %w[5 0], [api.last["RateLimit-Limit"], api.last["RateLimit-Remaining"]]
    assert_includes 1..2, Integer(api.last["Retry-After"])

    tokens = Array.new(2) { Integer(@http.get("/report").body[/fencing token (\d+)/, 1]) }
    assert_operator tokens.last, :>, tokens.first
    assert_nil @redis.get("lock:report"), "released after each report"

    assert_equal %w[403 403], [@http.get("/wp-login.php").code, @http.get("/api").code], "a scanner is banned"
  end
end
